// mimalloc's own interface (the program links it as its allocator: see Package.swift).
#include <mimalloc.h>

// Gives a freed stretch of memory back to the system as soon as it is free, not after a
// delay: the option was renamed in mimalloc 2.1 (decommit became purge).
static inline void rtdb_mi_return_memory_at_once(void) {
#if MI_MALLOC_VERSION >= 210
    mi_option_set(mi_option_purge_delay, 0);
#else
    mi_option_set(mi_option_decommit_delay, 0);
#endif
}
