// mimalloc's own interface (the program links it as its allocator: see Package.swift).
#include <mimalloc.h>
