#include "probe/process.h"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace headroom::detail {

namespace {

constexpr size_t kErrKeep = 64 * 1024;

struct Fd {
    int fd = -1;
    Fd() = default;
    explicit Fd(int f) : fd(f) {}
    Fd(const Fd&) = delete;
    Fd& operator=(const Fd&) = delete;
    ~Fd() { reset(); }
    void reset()
    {
        if (fd >= 0)
            ::close(fd);
        fd = -1;
    }
};

bool makePipe(Fd& readEnd, Fd& writeEnd)
{
    int p[2];
    if (::pipe2(p, O_CLOEXEC) != 0)
        return false;
    readEnd.fd = p[0];
    writeEnd.fd = p[1];
    return true;
}

void setNonBlocking(int fd)
{
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
}

} // namespace

ProcessOutcome runProcess(const ProcessSpec& spec)
{
    ProcessOutcome result;
    // stdin is a socket so that writes use MSG_NOSIGNAL: a child that dies early must not SIGPIPE us.
    int sp[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) != 0) {
        result.spawnErrno = errno;
        return result;
    }
    Fd inParent(sp[0]), inChild(sp[1]);
    Fd outRead, outWrite, errRead, errWrite;
    if (!makePipe(outRead, outWrite) || !makePipe(errRead, errWrite)) {
        result.spawnErrno = errno;
        return result;
    }

    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, inChild.fd, STDIN_FILENO);
    posix_spawn_file_actions_adddup2(&actions, outWrite.fd, STDOUT_FILENO);
    posix_spawn_file_actions_adddup2(&actions, errWrite.fd, STDERR_FILENO);
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    // Own process group, so a kill reaches anything it started; default signal dispositions, so a parent
    // that ignores SIGPIPE or blocks signals does not pass that on.
    sigset_t none, all;
    sigemptyset(&none);
    sigfillset(&all);
    posix_spawnattr_setsigmask(&attr, &none);
    posix_spawnattr_setsigdefault(&attr, &all);
    posix_spawnattr_setpgroup(&attr, 0);
    posix_spawnattr_setflags(&attr, static_cast<short>(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK
                                                       | POSIX_SPAWN_SETSIGDEF));

    std::vector<std::string> argStore;
    argStore.reserve(spec.args.size() + 1);
    argStore.push_back(spec.program);
    argStore.insert(argStore.end(), spec.args.begin(), spec.args.end());
    std::vector<char*> argv;
    for (std::string& a : argStore)
        argv.push_back(a.data());
    argv.push_back(nullptr);

    pid_t pid = -1;
    const int rc = ::posix_spawn(&pid, spec.program.c_str(), &actions, &attr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
    inChild.reset();
    outWrite.reset();
    errWrite.reset();
    if (rc != 0) {
        result.spawnErrno = rc;
        return result;
    }
    result.started = true;

    setNonBlocking(inParent.fd);
    setNonBlocking(outRead.fd);
    setNonBlocking(errRead.fd);
    size_t written = 0;
    if (spec.input.empty())
        inParent.reset();
    std::string errLine;

    const auto deadline = std::chrono::steady_clock::now() + spec.limit;
    bool killed = false;
    auto killChild = [&] {
        if (!killed) {
            ::kill(-pid, SIGKILL);
            ::kill(pid, SIGKILL);
            killed = true;
        }
    };

    while (outRead.fd >= 0 || errRead.fd >= 0) {
        if (spec.cancel && spec.cancel->load()) {
            result.cancelled = true;
            killChild();
            break;
        }
        const auto now = std::chrono::steady_clock::now();
        if (now >= deadline) {
            result.timedOut = true;
            killChild();
            break;
        }
        // Wake at least every 50 ms to notice cancellation.
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now).count();
        const int timeout = static_cast<int>(std::min<long long>(left + 1, 50));
        pollfd fds[3];
        nfds_t n = 0;
        int outIdx = -1, errIdx = -1, inIdx = -1;
        if (outRead.fd >= 0) {
            outIdx = static_cast<int>(n);
            fds[n++] = {outRead.fd, POLLIN, 0};
        }
        if (errRead.fd >= 0) {
            errIdx = static_cast<int>(n);
            fds[n++] = {errRead.fd, POLLIN, 0};
        }
        if (inParent.fd >= 0) {
            inIdx = static_cast<int>(n);
            fds[n++] = {inParent.fd, POLLOUT, 0};
        }
        const int ready = ::poll(fds, n, timeout);
        if (ready < 0) {
            if (errno == EINTR)
                continue;
            killChild();
            break;
        }
        char buf[65536];
        auto drain = [&](Fd& fd, short revents, bool isErr) {
            if (!(revents & (POLLIN | POLLHUP | POLLERR)))
                return;
            const ssize_t got = ::read(fd.fd, buf, sizeof buf);
            if (got > 0) {
                if (!isErr) {
                    result.out.append(buf, static_cast<size_t>(got));
                    return;
                }
                result.err.append(buf, static_cast<size_t>(got));
                if (result.err.size() > 2 * kErrKeep)
                    result.err.erase(0, result.err.size() - kErrKeep);
                errLine.append(buf, static_cast<size_t>(got));
                for (size_t nl; (nl = errLine.find('\n')) != std::string::npos;) {
                    if (spec.onErrLine)
                        spec.onErrLine(std::string_view(errLine).substr(0, nl));
                    errLine.erase(0, nl + 1);
                }
            } else if (got == 0 || (errno != EAGAIN && errno != EINTR)) {
                fd.reset();
            }
        };
        if (outIdx >= 0)
            drain(outRead, fds[outIdx].revents, false);
        if (errIdx >= 0)
            drain(errRead, fds[errIdx].revents, true);
        if (inIdx >= 0 && (fds[inIdx].revents & (POLLOUT | POLLERR | POLLHUP))) {
            const ssize_t sent = ::send(inParent.fd, spec.input.data() + written, spec.input.size() - written,
                                        MSG_NOSIGNAL);
            if (sent > 0)
                written += static_cast<size_t>(sent);
            else if (sent < 0 && errno != EAGAIN && errno != EINTR)
                inParent.reset(); // the child stopped reading; what it says on stderr explains why
            if (written >= spec.input.size())
                inParent.reset();
        }
    }
    inParent.reset();

    // Both output pipes are closed (or we killed it): reap, still honouring the deadline and cancellation,
    // since a child can close its outputs and keep running.
    int status = 0;
    for (;;) {
        const pid_t w = ::waitpid(pid, &status, killed ? 0 : WNOHANG);
        if (w == pid)
            break;
        if (w < 0 && errno != EINTR)
            return result;
        if (w == 0) {
            if (spec.cancel && spec.cancel->load()) {
                result.cancelled = true;
                killChild();
            } else if (std::chrono::steady_clock::now() >= deadline) {
                result.timedOut = true;
                killChild();
            } else {
                ::usleep(10000);
            }
        }
    }
    if (!errLine.empty() && spec.onErrLine)
        spec.onErrLine(errLine);
    if (WIFEXITED(status)) {
        result.exited = true;
        result.exitCode = WEXITSTATUS(status);
    } else if (WIFSIGNALED(status) && !killed) {
        result.signal = WTERMSIG(status);
    }
    return result;
}

} // namespace headroom::detail
