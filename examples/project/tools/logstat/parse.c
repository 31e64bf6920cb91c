#include "parse.h"

#include <stdio.h>
#include <string.h>

int parse_access_line(const char *line, struct access_entry *entry)
{
    char client[64];
    char path[2048];
    /* TODO: paths with spaces are percent-encoded by the service today; if
     * that changes, this sscanf splits them and the line is dropped. */
    int fields = sscanf(line, "%63s %7s %2047s %d %lf", client, entry->method, path,
                        &entry->status, &entry->duration_ms);
    if (fields != 5)
        return -1;
    if (entry->status < 100 || entry->status > 599)
        return -1;
    return 0;
}
