// stb's PNG decoder and writer, built from Debian's headers into the fuzz build's kiln_core
// instead of linking libstb.so, which is not instrumented: ASan then checks the decoder's buffers
// and libFuzzer follows its branches. (JPEG goes to libjpeg-turbo; kiln reaches no other format.)
#define STB_IMAGE_IMPLEMENTATION
#define STB_IMAGE_WRITE_IMPLEMENTATION
#include <stb_image.h>
#include <stb_image_write.h>
