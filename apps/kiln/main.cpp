#include "kiln/run_cli.h"

int main(int argc, char** argv) { return kiln::run_cli(argc, argv); }
