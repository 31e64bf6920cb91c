/* logstat: summary of a shortlink access log.
 *
 *   logstat [FILE]      (standard input without FILE)
 *
 * Prints the number of requests per status class and the median and 99th
 * percentile latency. Lines that are not access entries are counted and
 * skipped.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parse.h"

struct latencies {
    double *values;
    size_t count;
    size_t capacity;
};

static int push_latency(struct latencies *all, double value)
{
    if (all->count == all->capacity) {
        size_t capacity = all->capacity ? all->capacity * 2 : 1024;
        double *grown = realloc(all->values, capacity * sizeof *grown);
        if (!grown)
            return -1;
        all->values = grown;
        all->capacity = capacity;
    }
    all->values[all->count++] = value;
    return 0;
}

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Nearest-rank percentile of sorted values; 0 for an empty set. */
static double percentile(const struct latencies *all, double rank)
{
    if (all->count == 0)
        return 0.0;
    size_t index = (size_t)(rank / 100.0 * (double)(all->count - 1) + 0.5);
    return all->values[index];
}

int main(int argc, char **argv)
{
    FILE *input = stdin;
    if (argc > 2) {
        fprintf(stderr, "usage: logstat [FILE]\n");
        return 2;
    }
    if (argc == 2 && !(input = fopen(argv[1], "r"))) {
        fprintf(stderr, "logstat: %s: %s\n", argv[1], strerror(errno));
        return 1;
    }

    unsigned long by_class[6] = {0};
    unsigned long skipped = 0;
    struct latencies all = {0};
    char line[4096];
    while (fgets(line, sizeof line, input)) {
        struct access_entry entry;
        if (parse_access_line(line, &entry) != 0) {
            skipped++;
            continue;
        }
        by_class[entry.status / 100]++;
        if (push_latency(&all, entry.duration_ms) != 0) {
            fprintf(stderr, "logstat: out of memory\n");
            return 1;
        }
    }
    /* TODO: report errors from fgets (ferror) instead of treating them as EOF. */

    qsort(all.values, all.count, sizeof *all.values, compare_doubles);
    for (int class = 1; class <= 5; class++)
        printf("%dxx  %lu\n", class, by_class[class]);
    printf("requests  %zu (skipped %lu lines)\n", all.count, skipped);
    printf("latency   p50 %.1f ms, p99 %.1f ms\n", percentile(&all, 50), percentile(&all, 99));
    free(all.values);
    return 0;
}
