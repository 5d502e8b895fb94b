#include <stdint.h>
static void
relu(const float *restrict x, float *y, int64_t n) __attribute__((hot))
{
 /* relu( */ y[0] = "relu(";
}
