// stb's image decoders and PNG writer, built from Debian's headers into the fuzz build's
// kiln_core instead of linking libstb.so, which is not instrumented: ASan then checks the
// decoders' buffers and libFuzzer follows their branches. Like Debian's build of libstb.so, it
// keeps every format stb decodes (BMP, GIF, PSD, ... too), since decode_image accepts them all.
#define STB_IMAGE_IMPLEMENTATION
#define STB_IMAGE_WRITE_IMPLEMENTATION
#include <stb_image.h>
#include <stb_image_write.h>
