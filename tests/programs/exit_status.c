/* A well-behaved program: copies stdin to stdout, says something on stderr,
 * exits with the status it is given. */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    int c;
    while ((c = getchar()) != EOF)
        putchar(c);
    fprintf(stderr, "exit_status: exiting with %s\n", argc > 1 ? argv[1] : "0");
    return argc > 1 ? atoi(argv[1]) : 0;
}
