/* Calls a library's flush from an atexit handler with nothing remembered:
 * a crash at exit inside libpkgdemo.so, whose version only its
 * `.note.package` says (tests/versions.rs). */
#include <stdio.h>
#include <stdlib.h>

void pkgdemo_flush(void);

static void flush_at_exit(void)
{
    fprintf(stderr, "pkg_exit_crash: flushing at exit\n");
    pkgdemo_flush();
}

int main(void)
{
    atexit(flush_at_exit);
    return 0;
}
