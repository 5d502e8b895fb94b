#include <stdint.h>
#include <math.h>

/* KernelBench's level1/98: F.kl_div(torch.log(predictions), targets,
 * reduction='batchmean') = sum over all b, d of
 * targets * (log(targets) - log(predictions)), divided by B; one scalar
 * y[0]. Inputs are positive; nothing is normalised here. */
void kl_div_loss(const float *predictions, const float *targets, float *y, int64_t B, int64_t D)
{
    double tot = 0.0;
    for (int64_t b = 0; b < B; b++) {
        const float *pr = predictions + b * D;
        const float *tr = targets + b * D;
        float s = 0.0f;
        for (int64_t d = 0; d < D; d++)
            s += tr[d] * (logf(tr[d]) - logf(pr[d]));
        tot += s;
    }
    y[0] = (float)(tot / (double)B);
}
