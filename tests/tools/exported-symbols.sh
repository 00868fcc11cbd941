#!/usr/bin/env bash
# The symbols a shared library exports, one per line, sorted: defined and
# bound GLOBAL, WEAK or UNIQUE (gold also puts thread-locals it keeps LOCAL
# in the dynamic symbol table; GNU_UNIQUE shows as "<OS specific>: 10" where
# the ELF header says SYSV, so the name is taken as the last field).
# usage: tests/tools/exported-symbols.sh LIBRARY
set -euo pipefail
readelf --dyn-syms -W "$1" | awk '$1 ~ /^[0-9]+:$/ && $0 !~ / LOCAL / && $0 !~ / UND / { print $NF }' | sort -u
