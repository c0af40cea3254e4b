/* A crash three calls below main in a program built without frame
 * pointers (-O2 -fomit-frame-pointer, by tests/unwind.rs): only its call
 * frame information (.eh_frame, or .debug_frame when built with
 * -fno-asynchronous-unwind-tables -g) says where each frame's return
 * address is. Each function keeps a buffer on the stack, so return
 * addresses are not at fixed offsets a frame-pointer walk could guess, and
 * does work after its call, so no call becomes a tail jump.
 *
 * main -> run_model -> compute_layer -> store_result: SIGSEGV writing
 * through a null pointer. */
#include <stdio.h>
#include <string.h>

#define NOINLINE __attribute__((noinline, noclone))

int *volatile target; /* null: the write in store_result faults */
volatile unsigned sink;

NOINLINE static unsigned store_result(unsigned value)
{
    char scratch[96];
    memset(scratch, (int)value, sizeof scratch);
    sink += (unsigned)scratch[value % sizeof scratch];
    fprintf(stderr, "cfi_crash: crashing\n");
    *target = (int)value;
    return sink;
}

NOINLINE static unsigned compute_layer(unsigned seed)
{
    unsigned buf[40];
    for (unsigned i = 0; i < 40; i++) buf[i] = seed * i + sink;
    unsigned result = store_result(buf[seed % 40]);
    return result + buf[(seed + 3) % 40];
}

NOINLINE static unsigned run_model(unsigned layers)
{
    char name[200];
    unsigned total = 0;
    snprintf(name, sizeof name, "model-%u", layers);
    for (unsigned i = 0; i < layers; i++) total += compute_layer(i + (unsigned)strlen(name));
    return total + (unsigned)name[1];
}

int main(int argc, char **argv)
{
    (void)argv;
    unsigned total = run_model((unsigned)argc + 2);
    printf("%u\n", total);
    return 0;
}
