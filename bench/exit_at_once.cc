// The tool spawn_bench starts over and over: it exits at once with status 0.
// Linked statically (bench/CMakeLists.txt), so a start measures the process
// machinery (fork/clone, exec, the sandbox steps, exit, wait) rather than the
// dynamic loader.
int main() { return 0; }
