/* Parsing of one shortlink access-log line:
 *   CLIENT METHOD PATH STATUS DURATION_MS
 * e.g. "10.0.0.7 GET /k3Xq9 302 1.8" (see shortlink/handlers.py).
 */
#ifndef LOGSTAT_PARSE_H
#define LOGSTAT_PARSE_H

struct access_entry {
    char method[8];
    int status;
    double duration_ms;
};

/* Returns 0 and fills *entry, or -1 if the line is not an access entry. */
int parse_access_line(const char *line, struct access_entry *entry);

#endif
