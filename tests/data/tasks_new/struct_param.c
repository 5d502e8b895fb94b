/* tests/data/tasks_new/struct_param.c - a parameter kevo cannot pass: a
 * struct by value. */
struct params {
    float alpha;
    int n;
};

void axpy_cfg(const float *x, float *y, struct params cfg)
{
    for (int i = 0; i < cfg.n; i++)
        y[i] += cfg.alpha * x[i];
}
