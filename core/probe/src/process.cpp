#include "process.h"

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

struct Fd
{
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

void setNonBlocking(int fd) { ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK); }

// Our ends of the child's standard streams: its stdin socket, its stdout and stderr pipes.
struct Streams
{
    Fd in, out, err;
};

// Starts spec.program on new streams (`ours` gets the parent's ends); 0 and its pid, or the error number.
int spawnChild(const ProcessSpec& spec, Streams& ours, pid_t& pid)
{
    // stdin is a socket so that writes use MSG_NOSIGNAL: a child that dies early must not SIGPIPE us.
    int sp[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) != 0)
        return errno;
    ours.in.fd = sp[0];
    Fd inChild(sp[1]);
    Fd outWrite, errWrite;
    if (!makePipe(ours.out, outWrite) || !makePipe(ours.err, errWrite))
        return errno;

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
    posix_spawnattr_setflags(
        &attr, static_cast<short>(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF));

    std::vector<std::string> argStore;
    argStore.reserve(spec.args.size() + 1);
    argStore.push_back(spec.program);
    argStore.insert(argStore.end(), spec.args.begin(), spec.args.end());
    std::vector<char*> argv;
    for (std::string& a : argStore)
        argv.push_back(a.data());
    argv.push_back(nullptr);

    const int rc = ::posix_spawn(&pid, spec.program.c_str(), &actions, &attr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
    return rc;
}

// What the child writes: all of stdout, the tail of stderr (kErrKeep), and each complete stderr line handed
// to the caller as it arrives.
class Captured
{
public:
    Captured(std::string& out, std::string& err, const std::function<void(std::string_view)>& onErrLine)
        : m_out(out), m_err(err), m_onErrLine(onErrLine)
    {
    }

    // Reads what `fd` has for us; closes it at its end or on an error.
    void drain(Fd& fd, short revents, bool isErr)
    {
        if (!(revents & (POLLIN | POLLHUP | POLLERR)))
            return;
        const ssize_t got = ::read(fd.fd, m_buf, sizeof m_buf);
        if (got > 0) {
            if (isErr)
                addErr(static_cast<size_t>(got));
            else
                m_out.append(m_buf, static_cast<size_t>(got));
        } else if (got == 0 || (errno != EAGAIN && errno != EINTR)) {
            fd.reset();
        }
    }

    // The last stderr line, when the child ended without its newline.
    void finish()
    {
        if (!m_errLine.empty() && m_onErrLine)
            m_onErrLine(m_errLine);
    }

private:
    void addErr(size_t got)
    {
        m_err.append(m_buf, got);
        if (m_err.size() > 2 * kErrKeep)
            m_err.erase(0, m_err.size() - kErrKeep);
        m_errLine.append(m_buf, got);
        for (size_t nl; (nl = m_errLine.find('\n')) != std::string::npos;) {
            if (m_onErrLine)
                m_onErrLine(std::string_view(m_errLine).substr(0, nl));
            m_errLine.erase(0, nl + 1);
        }
    }

    std::string& m_out;
    std::string& m_err;
    const std::function<void(std::string_view)>& m_onErrLine;
    std::string m_errLine; // stderr since its last newline
    char m_buf[65536];
};

// One child's run: spawn it, pump its input and outputs until both output pipes close or the deadline or
// cancel kills it, then reap it.
class Run
{
public:
    explicit Run(const ProcessSpec& spec) : m_spec(spec), m_captured(m_result.out, m_result.err, spec.onErrLine) {}

    ProcessOutcome run()
    {
        if (!start())
            return std::move(m_result);
        pump();
        m_streams.in.reset();
        if (!reap())
            return std::move(m_result);
        m_captured.finish();
        if (WIFEXITED(m_status)) {
            m_result.exited = true;
            m_result.exitCode = WEXITSTATUS(m_status);
        } else if (WIFSIGNALED(m_status) && !m_killed) {
            m_result.signal = WTERMSIG(m_status);
        }
        return std::move(m_result);
    }

private:
    bool start()
    {
        if (const int error = spawnChild(m_spec, m_streams, m_pid); error != 0) {
            m_result.spawnErrno = error;
            return false;
        }
        m_result.started = true;
        m_deadline = std::chrono::steady_clock::now() + m_spec.limit;
        setNonBlocking(m_streams.in.fd);
        setNonBlocking(m_streams.out.fd);
        setNonBlocking(m_streams.err.fd);
        if (m_spec.input.empty())
            m_streams.in.reset();
        return true;
    }

    void killChild()
    {
        if (!m_killed) {
            ::kill(-m_pid, SIGKILL);
            ::kill(m_pid, SIGKILL);
            m_killed = true;
        }
    }

    // Kills the child when the caller cancelled or the deadline has passed (and records which); true if so.
    bool killIfDue(std::chrono::steady_clock::time_point now)
    {
        if (m_spec.cancel && m_spec.cancel->load())
            m_result.cancelled = true;
        else if (now >= m_deadline)
            m_result.timedOut = true;
        else
            return false;
        killChild();
        return true;
    }

    // Polls until both output pipes close, the deadline passes or the caller cancels.
    void pump()
    {
        while (m_streams.out.fd >= 0 || m_streams.err.fd >= 0) {
            const auto now = std::chrono::steady_clock::now();
            if (killIfDue(now))
                break;
            // Wake at least every 50 ms to notice cancellation.
            const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(m_deadline - now).count();
            if (!pollOnce(static_cast<int>(std::min<long long>(left + 1, 50)))) {
                killChild();
                break;
            }
        }
    }

    // One poll of the open streams, then what each is ready for; false when poll fails.
    bool pollOnce(int timeoutMs)
    {
        pollfd fds[3];
        nfds_t n = 0;
        int outIdx = -1, errIdx = -1, inIdx = -1;
        const auto watch = [&](const Fd& fd, short events, int& idx) {
            if (fd.fd >= 0) {
                idx = static_cast<int>(n);
                fds[n++] = {fd.fd, events, 0};
            }
        };
        watch(m_streams.out, POLLIN, outIdx);
        watch(m_streams.err, POLLIN, errIdx);
        watch(m_streams.in, POLLOUT, inIdx);
        if (::poll(fds, n, timeoutMs) < 0)
            return errno == EINTR;
        if (outIdx >= 0)
            m_captured.drain(m_streams.out, fds[outIdx].revents, false);
        if (errIdx >= 0)
            m_captured.drain(m_streams.err, fds[errIdx].revents, true);
        if (inIdx >= 0 && (fds[inIdx].revents & (POLLOUT | POLLERR | POLLHUP)))
            feed();
        return true;
    }

    void feed()
    {
        const std::string& input = m_spec.input;
        const ssize_t sent = ::send(m_streams.in.fd, input.data() + m_written, input.size() - m_written, MSG_NOSIGNAL);
        if (sent > 0)
            m_written += static_cast<size_t>(sent);
        else if (sent < 0 && errno != EAGAIN && errno != EINTR)
            m_streams.in.reset(); // the child stopped reading; what it says on stderr explains why
        if (m_written >= input.size())
            m_streams.in.reset();
    }

    // Both output pipes are closed (or we killed it): reap, still honouring the deadline and cancellation,
    // since a child can close its outputs and keep running. False when waitpid fails.
    bool reap()
    {
        for (;;) {
            const pid_t w = ::waitpid(m_pid, &m_status, m_killed ? 0 : WNOHANG);
            if (w == m_pid)
                return true;
            if (w < 0 && errno != EINTR)
                return false;
            if (w == 0 && !killIfDue(std::chrono::steady_clock::now()))
                ::usleep(10000);
        }
    }

    const ProcessSpec& m_spec;
    ProcessOutcome m_result;
    Captured m_captured;                              // writes into m_result
    std::chrono::steady_clock::time_point m_deadline; // the limit counts from the spawn
    Streams m_streams;
    pid_t m_pid = -1;
    bool m_killed = false;
    int m_status = 0;
    size_t m_written = 0;
};

} // namespace

ProcessOutcome runProcess(const ProcessSpec& spec) { return Run(spec).run(); }

} // namespace headroom::detail
