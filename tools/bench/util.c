/* Small helpers of every ringbench module: errors, clocks, statistics, names. */
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <time.h>

#include "ringbench.h"

volatile uint64_t sink;

void fail(const char *format, ...)
{
    va_list args;
    va_start(args, format);
    fputs("ringbench: error: ", stderr);
    vfprintf(stderr, format, args);
    fputc('\n', stderr);
    va_end(args);
}

double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

double load_average(void)
{
    double load[1];
    return getloadavg(load, 1) == 1 ? load[0] : NAN;
}

double median(double *values, int count)
{
    for (int i = 1; i < count; i++) {
        double v = values[i];
        int j = i;
        for (; j > 0 && values[j - 1] > v; j--)
            values[j] = values[j - 1];
        values[j] = v;
    }
    return count % 2 ? values[count / 2]
                     : (values[count / 2 - 1] + values[count / 2]) / 2.0;
}

const char *group_digits(size_t count, char buffer[32])
{
    char digits[24];
    int length = snprintf(digits, sizeof(digits), "%zu", count);
    char *out = buffer;
    for (int i = 0; i < length; i++) {
        if (i > 0 && (length - i) % 3 == 0)
            *out++ = ',';
        *out++ = digits[i];
    }
    *out = '\0';
    return buffer;
}

void node_name(size_t index, char name[32])
{
    snprintf(name, 32, "node-%zu", index);
}

void node_host(size_t index, char host[32])
{
    snprintf(host, 32, "10.%u.%u.%u", (unsigned)(index >> 16) & 255,
             (unsigned)(index >> 8) & 255, (unsigned)index & 255);
}

void node_address(size_t index, char address[48])
{
    char host[32];
    node_host(index, host);
    snprintf(address, 48, "%s:11211", host);
}

json_t *json_number(double value)
{
    return isnan(value) || isinf(value) ? json_null() : json_real(value);
}

void print_nodes_row(const size_t *counts, size_t count)
{
    char digits[32];
    printf("%-*s", ROW_LABEL_WIDTH, "nodes");
    for (size_t n = 0; n < count; n++)
        printf("%10s", group_digits(counts[n], digits));
    printf("\n");
}
