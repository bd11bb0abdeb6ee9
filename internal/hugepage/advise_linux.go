package hugepage

import "syscall"

// madvHugepage is MADV_HUGEPAGE (linux/mman.h).
const madvHugepage = 14

func advise(b []byte) { _ = syscall.Madvise(b, madvHugepage) }
