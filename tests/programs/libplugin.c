/* A plugin the program unloads before exit. */
#include <stdio.h>

static int released = 0;

void plugin_release(void)
{
    released = 1;
}
