/*
 * main.cpp - streaming and netcode as C++20 coroutines beside a game loop
 * (dagrt_coro.hpp; docs/runtime.md, "Coroutines"). The main thread runs
 * FRAMES frames of game code (a parallel-for over its entities); beside
 * it, on the same pool and holding no thread while they wait:
 *   - a streamer reads a world file chunk by chunk (co::read) and hands
 *     each chunk to the game on the main thread (co::resume_on_main: the
 *     game's state is the main thread's alone), checking every byte;
 *   - a client sends one datagram per frame to a server over UDP on
 *     127.0.0.1 (co::sendto, co::recvfrom with a deadline per reply), the
 *     server echoes each; at the end a cancel scope ends the server's
 *     receive, which no traffic would ever end.
 *
 *   coro_frame [FRAMES]   (1..100000, default 200)
 *
 * Exit status 0 only if the checks pass (the `checks:` line), 1 if they
 * fail or a socket or the world file cannot be had, 2 for a bad argument.
 * DAGRT_IO=fallback in the environment picks the fallback reactor.
 */
#include <dagrt_coro.hpp>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

using namespace std::chrono_literals;

namespace {

constexpr std::size_t chunk_bytes = 4096;
constexpr int chunks = 64;

unsigned char pattern(std::size_t off) { return static_cast<unsigned char>((off * 131u + (off >> 9)) & 0xff); }

/* What the main thread owns: touched only there (checked). */
struct game {
    std::vector<float> entities = std::vector<float>(4096, 1.0f);
    int chunks_in = 0;
    bool chunk_bad = false;
    bool off_main = false;
};

/* The streamer: one chunk after another, each applied on the main thread. */
dagrtpp::task<> stream(dagrt *rt, int fd, game *g, std::atomic<bool> *done)
{
    std::vector<unsigned char> buf(chunk_bytes);
    for (int c = 0; c < chunks; c++) {
        std::int64_t n = co_await dagrtpp::co::read(rt, fd, buf.data(), chunk_bytes,
                                                    static_cast<std::int64_t>(c * chunk_bytes));
        (void)co_await dagrtpp::co::resume_on_main(rt);   /* the game's state is the main thread's */
        if (dagrt_thread_index(rt) != 0)
            g->off_main = true;
        if (n != static_cast<std::int64_t>(chunk_bytes))
            g->chunk_bad = true;
        for (std::size_t i = 0; i < chunk_bytes && n > 0; i++)
            if (buf[i] != pattern(c * chunk_bytes + i))
                g->chunk_bad = true;
        g->chunks_in++;
        (void)co_await dagrtpp::co::resume_on_workers(rt);
    }
    done->store(true);
}

/* The server: echoes every datagram until its scope is cancelled. */
dagrtpp::task<int> server(dagrt *rt, int s, dagrtpp::cancel_scope *stop)
{
    int echoed = 0;
    for (;;) {
        char b[64];
        sockaddr_in from{};
        std::size_t fl = sizeof from;
        std::int64_t n = co_await dagrtpp::co::recvfrom(rt, s, b, sizeof b, reinterpret_cast<sockaddr *>(&from), &fl, stop);
        if (n == DAGRT_ECANCELED)
            co_return echoed;
        if (n < 0)
            co_return -1;
        if (co_await dagrtpp::co::sendto(rt, s, b, static_cast<std::size_t>(n), reinterpret_cast<sockaddr *>(&from), fl) == n)
            echoed++;
    }
}

/* The client: one datagram per frame tick, its echo awaited 1 s at most. */
dagrtpp::task<int> client(dagrt *rt, int s, sockaddr_in to, dagrtpp::semaphore *tick, int frames)
{
    int answered = 0;
    for (int f = 0; f < frames; f++) {
        if (co_await dagrtpp::co::acquire(rt, *tick))
            break;
        char msg[32], back[32] = {0};
        int len = std::snprintf(msg, sizeof msg, "frame %d", f);
        (void)co_await dagrtpp::co::sendto(rt, s, msg, static_cast<std::size_t>(len), reinterpret_cast<sockaddr *>(&to), sizeof to);
        dagrtpp::cancel_scope within(dagrtpp::clock::now() + 1s);
        std::int64_t n = co_await dagrtpp::co::recvfrom(rt, s, back, sizeof back, nullptr, nullptr, &within);
        if (n == len && std::memcmp(msg, back, static_cast<std::size_t>(len)) == 0)
            answered++;
    }
    co_return answered;
}

int udp(sockaddr_in *a)
{
    int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    std::memset(a, 0, sizeof *a);
    a->sin_family = AF_INET;
    a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof *a;
    if (s < 0 || bind(s, reinterpret_cast<sockaddr *>(a), len) != 0 ||
        getsockname(s, reinterpret_cast<sockaddr *>(a), &len) != 0)
        return -1;
    return s;
}

} // namespace

int main(int argc, char **argv)
{
    long frames = 200;
    if (argc > 2 || (argc == 2 && ((frames = std::strtol(argv[1], nullptr, 10)) < 1 || frames > 100000))) {
        std::fprintf(stderr, "usage: %s [FRAMES]   (1..100000, default 200)\n", argv[0]);
        return 2;
    }
    /* The world file: written here, read back by the streamer. */
    std::string path = std::string(argv[0]) + ".world";
    int fd = open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    std::vector<unsigned char> all(chunk_bytes * chunks);
    for (std::size_t i = 0; i < all.size(); i++)
        all[i] = pattern(i);
    if (fd < 0 || write(fd, all.data(), all.size()) != static_cast<ssize_t>(all.size())) {
        std::fprintf(stderr, "coro_frame: cannot write %s\n", path.c_str());
        return 1;
    }
    sockaddr_in sa{}, ca{};
    int ss = udp(&sa), cs = udp(&ca);
    if (ss < 0 || cs < 0) {
        std::fprintf(stderr, "coro_frame: no UDP socket on 127.0.0.1\n");
        return 1;
    }
    int rc = 1;
    {
        dagrtpp::runtime rt;
        if (!rt) {
            std::fprintf(stderr, "coro_frame: %s\n", rt.error().message().c_str());
            return 1;
        }
        game g;
        std::atomic<bool> streamed{false};
        dagrtpp::cancel_scope stop;
        dagrtpp::semaphore tick(0);
        (void)dagrtpp::spawn(rt, stream(rt, fd, &g, &streamed));
        auto srv = dagrtpp::start(rt, server(rt, ss, &stop));
        auto cli = dagrtpp::start(rt, client(rt, cs, sa, &tick, static_cast<int>(frames)));
        auto t0 = dagrtpp::clock::now();
        for (long f = 0; f < frames; f++) {
            /* The frame's game code; the main thread runs the streamer's
             * main-thread parts where it helps (the loop's wait, the pump). */
            (void)dagrtpp::parallel_for(rt, 0, g.entities.size(), [&](std::size_t i) { g.entities[i] *= 1.0001f; });
            tick.release();
            (void)dagrt_pump_main(rt);
            (void)dagrtpp::sleep_for(rt, 1ms);   /* the frame's pacing: helps meanwhile */
        }
        while (!streamed.load() || !cli.done())   /* the rest of the world, the last reply */
            (void)dagrtpp::sleep_for(rt, 1ms);
        double ms = std::chrono::duration<double, std::milli>(dagrtpp::clock::now() - t0).count();
        (void)dagrtpp::sleep_for(rt, 20ms);   /* nothing more comes: the server waits on */
        stop.request();
        (void)srv.wait(rt);
        int answered = cli.get(), echoed = srv.get();
        dagrt_io_stats st;
        (void)dagrt_get_io_stats(rt, &st);
        std::printf("frames: %ld in %.1f ms, reactor %s\n", frames, ms, st.reactor);
        std::printf("streamed: %d of %d chunks, on the main thread: %s, bytes ok: %s\n", g.chunks_in, chunks,
                    g.off_main ? "no" : "yes", g.chunk_bad ? "no" : "yes");
        std::printf("netcode: %d of %ld frames answered, %d echoed, server's last receive cancelled\n", answered,
                    frames, echoed);
        bool ok = g.chunks_in == chunks && !g.off_main && !g.chunk_bad && answered == frames && echoed == frames;
        std::printf("checks: %s\n", ok ? "ok" : "FAILED");
        rc = ok ? 0 : 1;
    }
    close(fd);
    unlink(path.c_str());
    close(ss);
    close(cs);
    return rc;
}
