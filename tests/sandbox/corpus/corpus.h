// The minimal VFS protocol an attack tool needs (docs/protocol.md): read the
// `init` line from stdin, try the attack, send one `result` notification
// whose content says what happened ("EACCES", "EPERM", ... or a text
// starting with "succeeded"), exit. corpus_test.cc asserts on that text.
#ifndef TOOLVFS_TESTS_SANDBOX_CORPUS_CORPUS_H_
#define TOOLVFS_TESTS_SANDBOX_CORPUS_CORPUS_H_

// Built with -D_GNU_SOURCE (strerrorname_np) by CMakeLists.txt.
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

// Reads the init line into `line` (truncated to `size` - 1 bytes), byte by
// byte: no stdio buffer may swallow what follows.
__attribute__((unused)) static void read_init_line(char* line, size_t size) {
  size_t length = 0;
  char c;
  while (read(STDIN_FILENO, &c, 1) == 1 && c != '\n') {
    if (length + 1 < size) line[length++] = c;
  }
  line[length] = '\0';
}

// Reads and drops the init line.
__attribute__((unused)) static void read_init(void) {
  char line[1];
  read_init_line(line, sizeof line);
}

// The string value of the first `"name":"..."` in `json` (no escapes
// expected: the test writes the arguments), or NULL.
__attribute__((unused)) static const char* string_field(const char* json, const char* name, char* out,
                                                        size_t size) {
  char key[128];
  snprintf(key, sizeof key, "\"%s\":\"", name);
  const char* start = strstr(json, key);
  if (start == NULL) return NULL;
  start += strlen(key);
  const char* end = strchr(start, '"');
  if (end == NULL || (size_t)(end - start) >= size) return NULL;
  memcpy(out, start, (size_t)(end - start));
  out[end - start] = '\0';
  return out;
}

// Sends the result; `what` must not need JSON escaping.
__attribute__((unused)) static void report(const char* what) {
  printf("{\"jsonrpc\":\"2.0\",\"method\":\"result\",\"params\":{\"content\":\"%s\"}}\n", what);
  fflush(stdout);
}

// "EACCES" etc.: what a denied attack reports.
__attribute__((unused)) static void report_errno(int error) {
  const char* name = strerrorname_np(error);
  report(name != NULL ? name : "unknown errno");
}

// Reports `error` if the attack failed (result < 0), else "succeeded".
__attribute__((unused)) static int report_attempt(long result, int error) {
  if (result < 0) {
    report_errno(error);
  } else {
    report("succeeded");
  }
  return 0;
}

#endif  // TOOLVFS_TESTS_SANDBOX_CORPUS_CORPUS_H_
