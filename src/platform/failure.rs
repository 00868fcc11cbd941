//! How a platform call that failed tells its caller: the kind of error to
//! raise and the message. The runtime's `Error` takes a [`Failure`]
//! (`From`), so `?` carries one up unchanged.

/// Which error a failure raises (`ValueError`, `RuntimeError`,
/// `InternalError`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FailureKind {
    /// The caller's input is wrong (`ValueError`).
    Value,
    /// The system refused (`RuntimeError`).
    Runtime,
    /// A failed check, as the reference words it (`InternalError`).
    Internal,
}

/// A failed platform call: its kind and its full message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Failure {
    /// The kind of error it raises.
    pub kind: FailureKind,
    /// The message, complete.
    pub message: String,
}

impl Failure {
    /// A `ValueError` failure.
    pub fn value(message: impl Into<String>) -> Failure {
        Failure {
            kind: FailureKind::Value,
            message: message.into(),
        }
    }

    /// A `RuntimeError` failure.
    pub fn runtime(message: impl Into<String>) -> Failure {
        Failure {
            kind: FailureKind::Runtime,
            message: message.into(),
        }
    }

    /// An `InternalError` failure.
    pub fn internal(message: impl Into<String>) -> Failure {
        Failure {
            kind: FailureKind::Internal,
            message: message.into(),
        }
    }

    /// The same kind with a new message made from the old one.
    pub fn rewrap(self, message: impl FnOnce(&str) -> String) -> Failure {
        Failure {
            message: message(&self.message),
            kind: self.kind,
        }
    }
}

/// A platform call's answer.
pub type Result<T> = core::result::Result<T, Failure>;

/// `<Kind>: <message>`, as the runtime's errors print.
impl core::fmt::Display for Failure {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let kind = match self.kind {
            FailureKind::Value => "ValueError",
            FailureKind::Runtime => "RuntimeError",
            FailureKind::Internal => "InternalError",
        };
        write!(f, "{kind}: {}", self.message)
    }
}
