// Streams a project file through a vfsd pipe into another file, with the
// C++ client (sdk/toolvfs/vfsd_client.h):
//
//   build/examples/vfsd_pipe_copy PROJECT_DIR SOURCE TARGET [TOOLVFS]
//
// Two handles joined by a pipe, as a command pipeline would be: the source
// is read in chunks and offered to the pipe's write end (a full pipe takes
// fewer bytes, and the rest is offered again); whatever the pipe holds is
// drained into the target's write handle, which lands atomically at close.
#include <toolvfs/vfsd_client.h>

#include <cstdio>
#include <string>

int main(int argc, char** argv) {
  if (argc != 4 && argc != 5) {
    std::fprintf(stderr, "usage: %s PROJECT_DIR SOURCE TARGET [TOOLVFS]\n", argv[0]);
    return 2;
  }
  try {
    toolvfs::VfsdClient vfsd = toolvfs::VfsdClient::spawn(
        {"--project", argv[1], "--allow", ".", "--read-max", "65536", "--no-audit"}, argc == 5 ? argv[4] : "");
    uint64_t source = vfsd.open_read(argv[2]);
    uint64_t target = vfsd.open_write(argv[3]);
    auto [pipe_read, pipe_write] = vfsd.make_pipe();
    std::string pending;
    bool source_done = false;
    uint64_t copied = 0;
    while (true) {
      if (!source_done && pending.empty()) {
        toolvfs::VfsdChunk chunk = vfsd.read(source, 65536);
        pending = std::move(chunk.data);
        if (chunk.eof && pending.empty()) {
          source_done = true;
          vfsd.close(pipe_write);  // the reader sees eof once the pipe is drained
        }
      }
      if (!pending.empty()) pending.erase(0, vfsd.write(pipe_write, pending));
      toolvfs::VfsdChunk out = vfsd.read(pipe_read, 65536);
      if (!out.data.empty()) {
        vfsd.write(target, out.data);
        copied += out.data.size();
      }
      if (out.eof) break;
    }
    vfsd.close(target);
    vfsd.close(source);
    vfsd.close(pipe_read);
    int status = vfsd.finish();
    std::printf("copied %llu bytes from %s to %s through a pipe\n", static_cast<unsigned long long>(copied), argv[2],
                argv[3]);
    return status;
  } catch (const toolvfs::VfsdException& error) {
    std::fprintf(stderr, "vfsd_pipe_copy: %s\n", error.what());
    return 1;
  }
}
