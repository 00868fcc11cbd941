//! Map and Dict objects with the official in-memory layouts.
//!
//! At handle + 24 lies `{void* data; u64 size; u64 slots; data_deleter;}`
//! and, for dense maps, `{u32 fib_shift; u64 iter_list_head; u64
//! iter_list_tail}` up to + 80. Bit 63 of `slots` marks the small layout: a
//! plain array of `{key, value}` pairs scanned linearly. The dense layout is
//! an array of blocks of 16 metadata bytes and 16 items `{key, value, prev,
//! next}`, addressed by Fibonacci hashing of `AnyHash`, with chains linked
//! by the 126-entry jump table and an insertion-order list. C++ code built
//! with the official headers reads (and may mutate) these maps directly, so
//! the algorithms below follow `container/map_base.h` step by step.
//!
//! A map made with at most 4 pairs keeps them in the object itself, right
//! after the state (handle + 80, where the reference's `SmallMapObj` keeps
//! its own), with no `data_deleter`: one allocation, as in the reference.
//! Other maps, and a small one that outgrows its slots, keep their entries
//! in a separate allocation released through `data_deleter` (libc `free`), a
//! state the reference produces too; foreign code may swap in storage of its
//! own, so destruction always goes through `data_deleter` when there is one.
//!
//! One file for both layouts (over 900 lines): their probes, growth and
//! erasure follow `container/map_base.h` step by step and share its helpers;
//! apart, a step of one layout would sit away from its twin.

use crate::abi::*;
use crate::runtime::model::any::{Any, AnyView};
use crate::runtime::model::error::{Error, ErrorKind, Result};
use crate::runtime::model::object::{Cell, ObjectRef, new_object};
use crate::runtime::value::hash::{any_equal, any_hash};
use core::cell::UnsafeCell;
use core::ffi::c_void;

const SMALL_TAG: u64 = 1 << 63;
const SMALL_INIT: u64 = 2;
const SMALL_MAX: u64 = 4;
const BLOCK_CAP: u64 = 16;
const EMPTY: u8 = 0xff;
const PROTECTED: u8 = 0xfe;
const NUM_JUMPS: u8 = 126;
const INVALID: u64 = u64::MAX;
const MAX_LOAD: f64 = 0.99;

/// A key/value pair as stored (owning).
type Kv = [TVMFFIAny; 2];

/// A dense-map item.
#[repr(C)]
struct Item {
    kv: Kv,
    prev: u64,
    next: u64,
}
const ITEM_SIZE: usize = size_of::<Item>();
const BLOCK_SIZE: usize = BLOCK_CAP as usize * (1 + ITEM_SIZE);
const _: () = assert!(ITEM_SIZE == 48 && BLOCK_SIZE == 784);

const NEXT_PROBE: [u64; NUM_JUMPS as usize] = [
    0,
    1,
    2,
    3,
    4,
    5,
    6,
    7,
    8,
    9,
    10,
    11,
    12,
    13,
    14,
    15,
    21,
    28,
    36,
    45,
    55,
    66,
    78,
    91,
    105,
    120,
    136,
    153,
    171,
    190,
    210,
    231,
    253,
    276,
    300,
    325,
    351,
    378,
    406,
    435,
    465,
    496,
    528,
    561,
    595,
    630,
    666,
    703,
    741,
    780,
    820,
    861,
    903,
    946,
    990,
    1035,
    1081,
    1128,
    1176,
    1225,
    1275,
    1326,
    1378,
    1431,
    1485,
    1540,
    1596,
    1653,
    1711,
    1770,
    1830,
    1891,
    1953,
    2016,
    2080,
    2145,
    2211,
    2278,
    2346,
    2415,
    2485,
    2556,
    2628,
    8515,
    19110,
    42778,
    96141,
    216153,
    486591,
    1092981,
    2458653,
    5532801,
    12442566,
    27993903,
    62983476,
    141717030,
    318844378,
    717352503,
    1614057336,
    3631522476,
    8170957530,
    18384510628,
    41364789378,
    93070452520,
    209408356380,
    471168559170,
    1060128894105,
    2385289465695,
    5366898840628,
    12075518705635,
    27169915244790,
    61132312065111,
    137547689707000,
    309482283181501,
    696335127828753,
    1566753995631385,
    3525196511162271,
    7931691992677701,
    17846306936293605,
    40154190677507445,
    90346928918121501,
    203280589587557251,
    457381325854679626,
    1029107982097042876,
    2315492959180353330,
    5209859154120846435,
];

/// The map state after the object header (56 bytes, see the module docs).
#[repr(C)]
pub struct MapState {
    data: *mut u8,
    size: u64,
    slots: u64,
    data_deleter: Option<unsafe extern "C" fn(*mut c_void)>,
    fib_shift: u32,
    iter_list_head: u64,
    iter_list_tail: u64,
}
const _: () = assert!(size_of::<MapState>() == 56);

// SAFETY: Maps and Dicts, ours and the reference's `MapObj`, keep this state
// after the header. Dicts change it in place, so it is not frozen.
unsafe impl Cell for MapState {
    fn holds(type_index: i32) -> bool {
        type_index == kTVMFFIMap || type_index == kTVMFFIDict
    }
}

/// The payload of our map objects. Mutation (of Dicts) is not synchronised,
/// as in the reference.
#[repr(transparent)]
struct MapPayload(UnsafeCell<MapState>);
// SAFETY: the state owns its entries; concurrent mutation is the caller's
// responsibility (the reference's contract too).
unsafe impl Send for MapPayload {}
// SAFETY: see `Send`.
unsafe impl Sync for MapPayload {}

impl Drop for MapPayload {
    fn drop(&mut self) {
        // Releasing entries may release nested containers in turn: on a
        // fresh stack segment when needed, so deep nesting cannot overflow.
        let state = self.0.get_mut();
        crate::runtime::model::depth::deep(|| state.reset());
    }
}

/// A small map object with `N` slots in place, right after its state.
#[repr(C)]
struct InlineMap<const N: usize> {
    payload: MapPayload,
    slots: [core::mem::MaybeUninit<Kv>; N],
}

// SAFETY: the slots hold owned pairs as the state's storage does; see
// `MapPayload`.
unsafe impl<const N: usize> Send for InlineMap<N> {}
// SAFETY: see `Send`.
unsafe impl<const N: usize> Sync for InlineMap<N> {}

/// A new empty small map of `N` slots held in the object itself.
fn inline_map<const N: usize>(type_index: i32) -> Result<ObjectRef> {
    const { assert!(core::mem::offset_of!(InlineMap<N>, slots) == size_of::<MapState>()) };
    let obj = new_object(
        type_index,
        InlineMap::<N> {
            payload: MapPayload(UnsafeCell::new(MapState {
                data: core::ptr::null_mut(),
                size: 0,
                slots: N as u64 | SMALL_TAG,
                data_deleter: None,
                fib_shift: 0,
                iter_list_head: INVALID,
                iter_list_tail: INVALID,
            })),
            slots: [const { core::mem::MaybeUninit::uninit() }; N],
        },
    );
    let state = state_of(&obj)?;
    // SAFETY: the state is ours alone, and the slots follow it in the same
    // (heap, never moved) object.
    unsafe { (*state).data = state.add(1).cast() };
    Ok(obj)
}

/// Moves a pair out of storage into owned values.
///
/// # Safety
/// `kv` holds an owned pair that is not used again.
unsafe fn take_kv(kv: *mut Kv) -> (Any, Any) {
    // SAFETY: per the contract.
    unsafe { (Any::from_raw((*kv)[0]), Any::from_raw((*kv)[1])) }
}

/// `size` bytes (at least one) from the C allocator, released by `free`.
fn alloc_or_die(size: usize, zeroed: bool) -> *mut u8 {
    crate::runtime::model::object::alloc_in_place(Some(size.max(1)), zeroed).as_ptr()
}

impl MapState {
    fn is_small(&self) -> bool {
        self.slots & SMALL_TAG != 0
    }

    fn num_slots(&self) -> u64 {
        self.slots & !SMALL_TAG
    }

    /// An empty small map with `n` (at least 2) slots.
    fn new_small(n: u64) -> MapState {
        let n = n.max(SMALL_INIT);
        MapState {
            data: alloc_or_die(n as usize * size_of::<Kv>(), false),
            size: 0,
            slots: n | SMALL_TAG,
            data_deleter: Some(libc::free),
            fib_shift: 0,
            iter_list_head: INVALID,
            iter_list_tail: INVALID,
        }
    }

    /// An empty dense map of `n_slots` slots.
    fn new_dense(fib_shift: u32, n_slots: u64) -> MapState {
        let n_blocks = n_slots.div_ceil(BLOCK_CAP) as usize;
        let data = alloc_or_die(n_blocks * BLOCK_SIZE, true);
        for b in 0..n_blocks {
            // SAFETY: each block starts with its 16 metadata bytes.
            unsafe { core::ptr::write_bytes(data.add(b * BLOCK_SIZE), EMPTY, BLOCK_CAP as usize) };
        }
        MapState {
            data,
            size: 0,
            slots: n_slots,
            data_deleter: Some(libc::free),
            fib_shift,
            iter_list_head: INVALID,
            iter_list_tail: INVALID,
        }
    }

    /// Destroys all entries and releases the storage through `data_deleter`.
    fn reset(&mut self) {
        self.clear();
        if let Some(deleter) = self.data_deleter.take() {
            // SAFETY: `data` was allocated by whoever installed the deleter.
            unsafe { deleter(self.data.cast()) };
        }
        self.data = core::ptr::null_mut();
        self.size = 0;
        self.slots = if self.is_small() { SMALL_TAG } else { 0 };
    }

    /// Destroys all entries, keeping the storage.
    fn clear(&mut self) {
        if self.data.is_null() {
            return;
        }
        if self.is_small() {
            for i in 0..self.size as usize {
                // SAFETY: the first `size` pairs are live.
                drop(unsafe { take_kv(self.data.cast::<Kv>().add(i)) });
            }
        } else {
            for i in 0..self.num_slots() {
                let meta = self.meta(i);
                // SAFETY: `meta` and `item` address slot `i` of the table.
                unsafe {
                    if *meta != EMPTY && *meta != PROTECTED {
                        *meta = EMPTY;
                        drop(take_kv(&raw mut (*self.item(i)).kv));
                    }
                }
            }
            self.iter_list_head = INVALID;
            self.iter_list_tail = INVALID;
        }
        self.size = 0;
    }

    // ---- dense helpers (addresses of slot `i`) ----

    fn meta(&self, i: u64) -> *mut u8 {
        // SAFETY: `i < num_slots`, inside the block array.
        unsafe {
            self.data
                .add((i / BLOCK_CAP) as usize * BLOCK_SIZE + (i % BLOCK_CAP) as usize)
        }
    }

    fn item(&self, i: u64) -> *mut Item {
        let offset = (i / BLOCK_CAP) as usize * BLOCK_SIZE
            + BLOCK_CAP as usize
            + (i % BLOCK_CAP) as usize * ITEM_SIZE;
        // SAFETY: `i < num_slots`, inside the block array.
        unsafe { self.data.add(offset).cast() }
    }

    fn get_meta(&self, i: u64) -> u8 {
        // SAFETY: see `meta`.
        unsafe { *self.meta(i) }
    }

    fn set_meta(&self, i: u64, v: u8) {
        // SAFETY: see `meta`.
        unsafe { *self.meta(i) = v }
    }

    fn set_jump(&self, i: u64, jump: u8) {
        self.set_meta(i, (self.get_meta(i) & 0x80) | jump);
    }

    fn is_head(&self, i: u64) -> bool {
        self.get_meta(i) & 0x80 == 0
    }

    fn key(&self, i: u64) -> AnyView<'_> {
        // SAFETY: slot `i` is live and its key a valid value.
        unsafe { AnyView::from_raw(&(*self.item(i)).kv[0]) }
    }

    fn index_from_hash(&self, hash: u64) -> u64 {
        11_400_714_819_323_198_485u64.wrapping_mul(hash) >> self.fib_shift
    }

    /// The next slot of a chain after `i` given its metadata, if any.
    fn next_in_chain(&self, i: u64, meta: u8) -> Option<u64> {
        let offset = NEXT_PROBE[(meta & 0x7f) as usize];
        (offset != 0).then(|| (i.wrapping_add(offset)) % self.num_slots())
    }

    fn has_next(&self, i: u64) -> bool {
        NEXT_PROBE[(self.get_meta(i) & 0x7f) as usize] != 0
    }

    /// The head of the chain for `hash`, if that slot holds a head.
    fn list_head(&self, hash: u64) -> Option<u64> {
        let i = self.index_from_hash(hash);
        self.is_head(i).then_some(i)
    }

    fn is_full(&self) -> bool {
        (self.size + 1) as f64 > self.num_slots() as f64 * MAX_LOAD
    }

    /// The first empty slot reachable from `i` by one jump, and the jump.
    fn next_empty(&self, i: u64) -> Option<(u8, u64)> {
        (1..NUM_JUMPS).find_map(|jump| {
            let c = (i.wrapping_add(NEXT_PROBE[jump as usize])) % self.num_slots();
            (self.get_meta(c) == EMPTY).then_some((jump, c))
        })
    }

    /// The slot before `i` in its chain.
    fn find_prev(&self, i: u64) -> Result<u64> {
        let mut prev = self.index_from_hash(any_hash(self.key(i))?);
        let mut next = self.next_in_chain(prev, self.get_meta(prev)).unwrap_or(0);
        while next != i {
            prev = next;
            next = self.next_in_chain(prev, self.get_meta(prev)).unwrap_or(0);
        }
        Ok(prev)
    }

    fn new_item(&self, i: u64, meta: u8, kv: Kv) {
        self.set_meta(i, meta);
        // SAFETY: slot `i` is free; we write a fresh item into it.
        unsafe {
            self.item(i).write(Item {
                kv,
                prev: INVALID,
                next: INVALID,
            })
        };
    }

    fn item_at(&self, i: u64) -> &Item {
        // SAFETY: slot `i` is live.
        unsafe { &*self.item(i) }
    }

    fn item_mut(&mut self, i: u64) -> &mut Item {
        // SAFETY: slot `i` is live and `self` is borrowed exclusively.
        unsafe { &mut *self.item(i) }
    }

    fn list_unlink(&mut self, i: u64) {
        let (prev, next) = (self.item_at(i).prev, self.item_at(i).next);
        if prev == INVALID {
            self.iter_list_head = next
        } else {
            self.item_mut(prev).next = next
        }
        if next == INVALID {
            self.iter_list_tail = prev
        } else {
            self.item_mut(next).prev = prev
        }
    }

    fn list_push_back(&mut self, i: u64) {
        let tail = self.iter_list_tail;
        self.item_mut(i).prev = tail;
        self.item_mut(i).next = INVALID;
        if tail != INVALID {
            self.item_mut(tail).next = i;
        }
        if self.iter_list_head == INVALID {
            self.iter_list_head = i;
        }
        self.iter_list_tail = i;
    }

    fn list_replace(&mut self, src: u64, dst: u64) {
        let (prev, next) = (self.item_at(src).prev, self.item_at(src).next);
        self.item_mut(dst).prev = prev;
        self.item_mut(dst).next = next;
        if prev == INVALID {
            self.iter_list_head = dst
        } else {
            self.item_mut(prev).next = dst
        }
        if next == INVALID {
            self.iter_list_tail = dst
        } else {
            self.item_mut(next).prev = dst
        }
    }

    // ---- lookup ----

    /// The slot (small: index) holding `key`.
    fn find(&self, key: AnyView<'_>) -> Result<Option<u64>> {
        if self.size == 0 {
            return Ok(None);
        }
        if self.is_small() {
            for i in 0..self.size {
                // SAFETY: the first `size` pairs are live.
                let stored =
                    unsafe { AnyView::from_raw(&(*self.data.cast::<Kv>().add(i as usize))[0]) };
                if any_equal(stored, key)? {
                    return Ok(Some(i));
                }
            }
            return Ok(None);
        }
        let mut node = self.list_head(any_hash(key)?);
        while let Some(i) = node {
            if any_equal(key, self.key(i))? {
                return Ok(Some(i));
            }
            node = self.next_in_chain(i, self.get_meta(i));
        }
        Ok(None)
    }

    /// The pair at a slot found by `find` or yielded by iteration.
    fn kv_at(&self, slot: u64) -> &Kv {
        if self.is_small() {
            // SAFETY: `slot < size`.
            unsafe { &*self.data.cast::<Kv>().add(slot as usize) }
        } else {
            &self.item_at(slot).kv
        }
    }

    /// The slots in iteration order.
    fn slots_in_order(&self) -> Vec<u64> {
        if self.is_small() {
            return (0..self.size).collect();
        }
        let mut out = Vec::with_capacity(self.size as usize);
        let mut i = self.iter_list_head;
        while i != INVALID {
            out.push(i);
            i = self.item_at(i).next;
        }
        out
    }

    // ---- insertion ----

    /// Dense `TryInsert`: `Some((slot, existed))` with the key in place
    /// (an existing entry is unlinked from the order list; a new one holds a
    /// bitwise copy of `key` and a None value), None when the table must grow.
    fn dense_try_insert(&mut self, key: &TVMFFIAny) -> Result<Option<(u64, bool)>> {
        if self.slots == 0 {
            return Ok(None);
        }
        // SAFETY: the key being inserted is a valid value the map will own.
        let key_view = unsafe { AnyView::from_raw(key) };
        let mut iter = self.index_from_hash(any_hash(key_view)?);
        if self.get_meta(iter) == EMPTY {
            self.new_item(iter, 0x00, [*key, TVMFFIAny::NONE]);
            self.size += 1;
            return Ok(Some((iter, false)));
        }
        if !self.is_head(iter) {
            if self.is_full() {
                return Ok(None);
            }
            return Ok(self.spare_list_head(iter, key)?.map(|slot| (slot, false)));
        }
        let mut next = Some(iter);
        while let Some(n) = next {
            if any_equal(key_view, self.key(n))? {
                self.list_unlink(n);
                return Ok(Some((n, true)));
            }
            iter = n;
            next = self.next_in_chain(n, self.get_meta(n));
        }
        if self.is_full() {
            return Ok(None);
        }
        let Some((jump, slot)) = self.next_empty(iter) else {
            return Ok(None);
        };
        self.new_item(slot, 0x80, [*key, TVMFFIAny::NONE]);
        self.set_jump(iter, jump);
        self.size += 1;
        Ok(Some((slot, false)))
    }

    /// `TrySpareListHead`: moves the chain occupying `target` elsewhere so the
    /// new key can head its own chain there.
    fn spare_list_head(&mut self, target: u64, key: &TVMFFIAny) -> Result<Option<u64>> {
        let mut r = Some(target);
        let mut w = self.find_prev(target)?;
        let mut first = true;
        while let Some(ri) = r {
            let Some((jump, empty)) = self.next_empty(w) else {
                return Ok(None);
            };
            // SAFETY: slot `ri` is live; its pair moves to `empty`.
            let kv = unsafe { core::ptr::read(&(*self.item(ri)).kv) };
            self.new_item(empty, 0x80, kv);
            self.list_replace(ri, empty);
            let r_meta = self.get_meta(ri);
            self.set_meta(ri, if first { PROTECTED } else { EMPTY });
            first = false;
            self.set_jump(w, jump);
            w = empty;
            r = self.next_in_chain(ri, r_meta);
        }
        self.new_item(target, 0x00, [*key, TVMFFIAny::NONE]);
        self.size += 1;
        Ok(Some(target))
    }

    /// Inserts into a dense map, rehashing into a table twice the size when
    /// full (in the reference's iteration order).
    fn dense_insert(&mut self, kv: Kv) -> Result<()> {
        if let Some((slot, existed)) = self.dense_try_insert(&kv[0])? {
            let item = self.item_mut(slot);
            // SAFETY: the stored value is owned and replaced; a new entry
            // took over the key's reference, an existing one keeps its own
            // key, so the caller's copy is released.
            unsafe {
                drop(Any::from_raw(core::mem::replace(&mut item.kv[1], kv[1])));
                if existed {
                    drop(Any::from_raw(kv[0]));
                }
            }
            self.list_push_back(slot);
            return Ok(());
        }
        let mut grown = MapState::new_dense(self.fib_shift - 1, self.num_slots() * 2);
        for slot in self.slots_in_order() {
            // SAFETY: each live pair moves to the new table exactly once.
            let kv = unsafe { core::ptr::read(&(*self.item(slot)).kv) };
            self.set_meta(slot, EMPTY);
            grown.dense_insert(kv)?;
        }
        grown.dense_insert(kv)?;
        self.size = 0;
        self.reset();
        *self = grown;
        Ok(())
    }

    /// `Map.Set` / `Dict.Set`: inserts or updates, growing small → larger
    /// small → dense as the reference does. Takes ownership of `kv`.
    pub fn insert(&mut self, kv: Kv) -> Result<()> {
        if !self.is_small() {
            return self.dense_insert(kv);
        }
        // SAFETY: the key being inserted is a valid value the map will own.
        if let Some(i) = self.find(unsafe { AnyView::from_raw(&kv[0]) })? {
            // SAFETY: replace the value of a live pair; release the new key.
            unsafe {
                let pair = &mut *self.data.cast::<Kv>().add(i as usize);
                drop(Any::from_raw(core::mem::replace(&mut pair[1], kv[1])));
                drop(Any::from_raw(kv[0]));
            }
            return Ok(());
        }
        if self.size < self.num_slots() {
            // SAFETY: slot `size` is free.
            unsafe { self.data.cast::<Kv>().add(self.size as usize).write(kv) };
            self.size += 1;
            return Ok(());
        }
        let pairs = self.take_small_pairs();
        if self.num_slots() < SMALL_MAX {
            let next = (self.num_slots() * 2).clamp(SMALL_INIT, SMALL_MAX);
            let mut grown = MapState::new_small(next);
            for pair in pairs {
                // SAFETY: slots below `next` are free; ownership moves.
                unsafe { grown.data.cast::<Kv>().add(grown.size as usize).write(pair) };
                grown.size += 1;
            }
            self.reset();
            *self = grown;
            return self.insert(kv);
        }
        let mut dense = MapState::from_pairs_dense(pairs)?;
        dense.dense_insert(kv)?;
        self.reset();
        *self = dense;
        Ok(())
    }

    /// Moves the pairs out of a small map, leaving it empty.
    fn take_small_pairs(&mut self) -> Vec<Kv> {
        // SAFETY: the first `size` pairs are live; we take them all.
        let pairs = (0..self.size as usize)
            .map(|i| unsafe { core::ptr::read(self.data.cast::<Kv>().add(i)) })
            .collect();
        self.size = 0;
        pairs
    }

    /// A dense map sized for `pairs` (`CalcTableSize`) holding them in order.
    fn from_pairs_dense(pairs: Vec<Kv>) -> Result<MapState> {
        let cap = pairs.len() as u64;
        let (mut shift, mut slots) = (64u32, 1u64);
        let mut c = cap;
        while c != 0 {
            shift -= 1;
            slots <<= 1;
            c >>= 1;
        }
        let (fib_shift, n_slots) = if slots < cap * 2 {
            (shift - 1, slots << 1)
        } else {
            (shift, slots)
        };
        let mut dense = MapState::new_dense(fib_shift, n_slots);
        for kv in pairs {
            dense.dense_insert(kv)?;
        }
        Ok(dense)
    }

    /// Removes the entry at `slot` (as found by `find`).
    fn erase_slot(&mut self, slot: u64) -> Result<()> {
        if self.is_small() {
            let base = self.data.cast::<Kv>();
            // SAFETY: `slot < size`; the tail shifts down by one.
            unsafe {
                drop(take_kv(base.add(slot as usize)));
                core::ptr::copy(
                    base.add(slot as usize + 1),
                    base.add(slot as usize),
                    (self.size - slot - 1) as usize,
                );
            }
            self.size -= 1;
            return Ok(());
        }
        self.size -= 1;
        if !self.has_next(slot) {
            if !self.is_head(slot) {
                let prev = self.find_prev(slot)?;
                self.set_jump(prev, 0);
            }
            self.list_unlink(slot);
            // SAFETY: the pair is live and dropped once.
            drop(unsafe { take_kv(&raw mut (*self.item(slot)).kv) });
            self.set_meta(slot, EMPTY);
        } else {
            let (mut last, mut prev) = (slot, slot);
            last = self
                .next_in_chain(last, self.get_meta(last))
                .expect("has next");
            while self.has_next(last) {
                prev = last;
                last = self
                    .next_in_chain(last, self.get_meta(last))
                    .expect("has next");
            }
            self.list_unlink(slot);
            // SAFETY: drop the erased pair, move the chain's last pair here.
            unsafe {
                drop(take_kv(&raw mut (*self.item(slot)).kv));
                let moved = core::ptr::read(&(*self.item(last)).kv);
                (*self.item(slot)).kv = moved;
            }
            self.list_replace(last, slot);
            self.set_meta(last, EMPTY);
            self.set_jump(prev, 0);
        }
        Ok(())
    }
}

/// Views a Map or Dict object's state (ours or foreign).
fn state_of(obj: &ObjectRef) -> Result<*mut MapState> {
    obj.cell_ptr::<MapState>()
        .map(|state| state.as_ptr())
        .ok_or_else(|| {
            Error::type_error(format!(
                "expected a map, got {}",
                crate::runtime::model::type_table::type_key_of(obj.type_index())
            ))
        })
}

/// Makes a Map (`kTVMFFIMap`) or Dict (`kTVMFFIDict`) from pairs, inserting
/// them one by one as the reference's `Set` does.
pub fn new_map(type_index: i32, pairs: impl IntoIterator<Item = (Any, Any)>) -> Result<ObjectRef> {
    let pairs = pairs.into_iter();
    // A known count of at most 4 pairs: the slots in the object itself.
    let obj = match pairs.size_hint() {
        (n, Some(m)) if n == m && n <= 2 => inline_map::<2>(type_index)?,
        (3, Some(3)) => inline_map::<3>(type_index)?,
        (4, Some(4)) => inline_map::<4>(type_index)?,
        _ => new_object(
            type_index,
            MapPayload(UnsafeCell::new(MapState::new_small(SMALL_INIT))),
        ),
    };
    let state = state_of(&obj)?;
    for (k, v) in pairs {
        // SAFETY: the map is fresh and ours alone.
        unsafe { (*state).insert([k.into_raw(), v.into_raw()]) }?;
    }
    Ok(obj)
}

/// The number of entries.
pub fn size(obj: &ObjectRef) -> Result<u64> {
    // SAFETY: `obj` keeps the state alive.
    Ok(unsafe { (*state_of(obj)?).size })
}

/// A new reference to the value of `key`, if present.
pub fn get(obj: &ObjectRef, key: AnyView<'_>) -> Result<Option<Any>> {
    // SAFETY: `obj` keeps the state alive; lookups only read.
    let state = unsafe { &*state_of(obj)? };
    Ok(match state.find(key)? {
        Some(slot) => {
            // SAFETY: the stored value is valid; we copy it with a new reference.
            let value =
                unsafe { crate::runtime::model::any::AnyView::from_raw(&state.kv_at(slot)[1]) };
            Some(value.to_owned_any()?)
        }
        None => None,
    })
}

/// The value of `key`, if present, borrowed from the map (no reference
/// count change).
pub fn get_borrowed<'m>(
    obj: &'m ObjectRef,
    key: AnyView<'_>,
) -> Result<Option<crate::runtime::model::any::AnyView<'m>>> {
    // SAFETY: `obj` keeps the state alive; lookups only read.
    let state = unsafe { &*state_of(obj)? };
    // SAFETY: the stored value lives as long as the map holds it, which
    // the borrow of `obj` extends to (writers need the caller's lock).
    Ok(state.find(key)?.map(|slot| unsafe {
        crate::runtime::model::any::AnyView::from_raw(&state.kv_at(slot)[1])
    }))
}

/// The value of `key`, or KeyError "key is not in Map".
pub fn at(obj: &ObjectRef, key: AnyView<'_>) -> Result<Any> {
    get(obj, key)?.ok_or_else(|| Error::new(ErrorKind::KeyError, "key is not in Map"))
}

/// Sets `key` to `value` in place (Dicts).
pub fn set(obj: &ObjectRef, key: Any, value: Any) -> Result<()> {
    // SAFETY: in-place mutation of a Dict, unsynchronised as in the reference.
    unsafe { (*state_of(obj)?).insert([key.into_raw(), value.into_raw()]) }
}

/// Removes `key` if present (Dicts).
pub fn erase(obj: &ObjectRef, key: AnyView<'_>) -> Result<()> {
    let state = state_of(obj)?;
    // SAFETY: as in `set`.
    unsafe {
        if let Some(slot) = (*state).find(key)? {
            (*state).erase_slot(slot)?;
        }
    }
    Ok(())
}

/// Removes every entry (Dicts).
pub fn clear(obj: &ObjectRef) -> Result<()> {
    // SAFETY: as in `set`.
    unsafe { (*state_of(obj)?).clear() };
    Ok(())
}

/// New references to the pairs, in iteration order.
pub fn items(obj: &ObjectRef) -> Result<Vec<(Any, Any)>> {
    // SAFETY: `obj` keeps the state alive.
    let state = unsafe { &*state_of(obj)? };
    state
        .slots_in_order()
        .into_iter()
        .map(|slot| {
            let kv = state.kv_at(slot);
            // SAFETY: stored values are valid; we take new references.
            unsafe {
                Ok((
                    crate::runtime::model::any::AnyView::from_raw(&kv[0]).to_owned_any()?,
                    crate::runtime::model::any::AnyView::from_raw(&kv[1]).to_owned_any()?,
                ))
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::model::string::{TextKind, make_text};

    fn key(i: usize) -> Any {
        make_text(
            format!("key-{i:03}-long-enough-for-the-heap").as_bytes(),
            TextKind::Str,
        )
    }

    #[test]
    fn small_and_dense_maps_find_insert_and_erase() {
        for n in [3usize, 100] {
            let m = new_map(kTVMFFIDict, (0..n).map(|i| (key(i), Any::from(i as i64)))).unwrap();
            assert_eq!(size(&m).unwrap(), n as u64);
            for i in 0..n {
                assert_eq!(
                    get(&m, key(i).view()).unwrap().unwrap().view().as_i64(),
                    Some(i as i64)
                );
            }
            assert!(get(&m, key(n).view()).unwrap().is_none());
            assert_eq!(
                at(&m, key(n).view()).unwrap_err().to_string(),
                "KeyError: key is not in Map"
            );
            // A small string key equals the same text stored on the heap.
            set(&m, make_text(b"abc", TextKind::Str), Any::from(-1i64)).unwrap();
            let heap_abc = crate::runtime::model::string::make_text(b"abc", TextKind::Str);
            assert_eq!(
                get(&m, heap_abc.view()).unwrap().unwrap().view().as_i64(),
                Some(-1)
            );
            erase(&m, key(0).view()).unwrap();
            assert!(get(&m, key(0).view()).unwrap().is_none());
            assert_eq!(size(&m).unwrap(), n as u64);
        }
    }

    #[test]
    fn maps_of_up_to_four_pairs_keep_them_in_place_and_grow_out() {
        let value = make_text(b"a value that lives on the heap", TextKind::Str)
            .view()
            .to_object()
            .unwrap();
        for n in 0..=5usize {
            let m = new_map(
                kTVMFFIDict,
                (0..n).map(|i| (key(i), Any::from(value.clone()))),
            )
            .unwrap();
            // SAFETY: `m` keeps its state alive.
            let state = unsafe { &*state_of(&m).unwrap() };
            let in_place = state.data.cast_const() == m.as_ptr().cast::<u8>().wrapping_add(80);
            assert_eq!(
                (in_place, state.data_deleter.is_none()),
                (n <= 4, n <= 4),
                "{n} pairs"
            );
            // Growing past the slots moves the pairs out (to a small heap
            // array, then a dense table), keeping every value once.
            for i in n..n + 6 {
                set(&m, key(i), Any::from(value.clone())).unwrap();
            }
            assert_eq!(size(&m).unwrap(), n as u64 + 6);
            assert_eq!(value.strong_count() as usize, n + 7);
            for i in 0..n + 6 {
                assert!(get(&m, key(i).view()).unwrap().is_some());
            }
            erase(&m, key(0).view()).unwrap();
            assert_eq!(value.strong_count() as usize, n + 6);
            drop(m);
            assert_eq!(value.strong_count(), 1);
        }
    }

    #[test]
    fn items_keep_insertion_order_and_clear_releases_values() {
        let value = make_text(b"a value that lives on the heap", TextKind::Str)
            .view()
            .to_object()
            .unwrap();
        let m = new_map(
            kTVMFFIDict,
            (0..5).map(|i| (key(i), Any::from(value.clone()))),
        )
        .unwrap();
        assert_eq!(value.strong_count(), 6);
        let order: Vec<String> = items(&m)
            .unwrap()
            .iter()
            .map(|(k, _)| {
                String::from_utf8_lossy(
                    crate::runtime::model::string::str_bytes_of(k.view(), TextKind::Str).unwrap(),
                )
                .into_owned()
            })
            .collect();
        assert_eq!(
            order,
            (0..5)
                .map(|i| format!("key-{i:03}-long-enough-for-the-heap"))
                .collect::<Vec<_>>()
        );
        erase(&m, key(99).view()).unwrap();
        assert_eq!(size(&m).unwrap(), 5);
        clear(&m).unwrap();
        assert_eq!(size(&m).unwrap(), 0);
        assert_eq!(value.strong_count(), 1);
        let array = crate::runtime::value::seq::new_array(Vec::new());
        assert_eq!(
            size(&array).unwrap_err().to_string(),
            "TypeError: expected a map, got ffi.Array"
        );
    }
}
