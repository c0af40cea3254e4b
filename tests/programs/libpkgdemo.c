/* A library that flushes a cache it was told about, for the package-note
 * version test (tests/versions.rs): built with and without
 * `--package-metadata`. */
#include <stddef.h>

static int *cache;

void pkgdemo_remember(int *where)
{
    cache = where;
}

void pkgdemo_flush(void)
{
    *cache = 0; /* NULL when nothing was remembered: SIGSEGV */
}
