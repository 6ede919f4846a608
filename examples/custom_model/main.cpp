// Your own kiln: the whole command line, with the components of this project built in.

#include <kiln/run_cli.h>

int main(int argc, char** argv) { return kiln::run_cli(argc, argv); }
