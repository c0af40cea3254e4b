/* Stand-in for the python3 executable: main hands over to libpython. */
int Py_BytesMain(int argc, char **argv);

int main(int argc, char **argv)
{
    return Py_BytesMain(argc, argv);
}
