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

// One child's run: spawn it on a socket (stdin) and two pipes, pump its input and outputs until both pipes
// close or the deadline/cancel kills it, then reap it.
class Run
{
public:
    explicit Run(const ProcessSpec& spec) : m_spec(spec) {}

    ProcessOutcome run()
    {
        if (!spawn())
            return std::move(m_result);
        pump();
        m_in.reset();
        if (!reap())
            return std::move(m_result);
        if (!m_errLine.empty() && m_spec.onErrLine)
            m_spec.onErrLine(m_errLine);
        if (WIFEXITED(m_status)) {
            m_result.exited = true;
            m_result.exitCode = WEXITSTATUS(m_status);
        } else if (WIFSIGNALED(m_status) && !m_killed) {
            m_result.signal = WTERMSIG(m_status);
        }
        return std::move(m_result);
    }

private:
    bool spawn()
    {
        // stdin is a socket so that writes use MSG_NOSIGNAL: a child that dies early must not SIGPIPE us.
        int sp[2];
        if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) != 0) {
            m_result.spawnErrno = errno;
            return false;
        }
        m_in.fd = sp[0];
        Fd inChild(sp[1]);
        Fd outWrite, errWrite;
        if (!makePipe(m_out, outWrite) || !makePipe(m_err, errWrite)) {
            m_result.spawnErrno = errno;
            return false;
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
        posix_spawnattr_setflags(
            &attr, static_cast<short>(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF));

        std::vector<std::string> argStore;
        argStore.reserve(m_spec.args.size() + 1);
        argStore.push_back(m_spec.program);
        argStore.insert(argStore.end(), m_spec.args.begin(), m_spec.args.end());
        std::vector<char*> argv;
        for (std::string& a : argStore)
            argv.push_back(a.data());
        argv.push_back(nullptr);

        const int rc = ::posix_spawn(&m_pid, m_spec.program.c_str(), &actions, &attr, argv.data(), environ);
        posix_spawn_file_actions_destroy(&actions);
        posix_spawnattr_destroy(&attr);
        if (rc != 0) {
            m_result.spawnErrno = rc;
            return false;
        }
        m_result.started = true;
        m_deadline = std::chrono::steady_clock::now() + m_spec.limit;
        setNonBlocking(m_in.fd);
        setNonBlocking(m_out.fd);
        setNonBlocking(m_err.fd);
        if (m_spec.input.empty())
            m_in.reset();
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

    // Polls until both output pipes close, the deadline passes or the caller cancels.
    void pump()
    {
        while (m_out.fd >= 0 || m_err.fd >= 0) {
            if (m_spec.cancel && m_spec.cancel->load()) {
                m_result.cancelled = true;
                killChild();
                break;
            }
            const auto now = std::chrono::steady_clock::now();
            if (now >= m_deadline) {
                m_result.timedOut = true;
                killChild();
                break;
            }
            // Wake at least every 50 ms to notice cancellation.
            const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(m_deadline - now).count();
            const int timeout = static_cast<int>(std::min<long long>(left + 1, 50));
            pollfd fds[3];
            nfds_t n = 0;
            int outIdx = -1, errIdx = -1, inIdx = -1;
            if (m_out.fd >= 0) {
                outIdx = static_cast<int>(n);
                fds[n++] = {m_out.fd, POLLIN, 0};
            }
            if (m_err.fd >= 0) {
                errIdx = static_cast<int>(n);
                fds[n++] = {m_err.fd, POLLIN, 0};
            }
            if (m_in.fd >= 0) {
                inIdx = static_cast<int>(n);
                fds[n++] = {m_in.fd, POLLOUT, 0};
            }
            const int ready = ::poll(fds, n, timeout);
            if (ready < 0) {
                if (errno == EINTR)
                    continue;
                killChild();
                break;
            }
            if (outIdx >= 0)
                drain(m_out, fds[outIdx].revents, false);
            if (errIdx >= 0)
                drain(m_err, fds[errIdx].revents, true);
            if (inIdx >= 0 && (fds[inIdx].revents & (POLLOUT | POLLERR | POLLHUP)))
                feed();
        }
    }

    void drain(Fd& fd, short revents, bool isErr)
    {
        if (!(revents & (POLLIN | POLLHUP | POLLERR)))
            return;
        const ssize_t got = ::read(fd.fd, m_buf, sizeof m_buf);
        if (got > 0) {
            if (!isErr) {
                m_result.out.append(m_buf, static_cast<size_t>(got));
                return;
            }
            m_result.err.append(m_buf, static_cast<size_t>(got));
            if (m_result.err.size() > 2 * kErrKeep)
                m_result.err.erase(0, m_result.err.size() - kErrKeep);
            m_errLine.append(m_buf, static_cast<size_t>(got));
            for (size_t nl; (nl = m_errLine.find('\n')) != std::string::npos;) {
                if (m_spec.onErrLine)
                    m_spec.onErrLine(std::string_view(m_errLine).substr(0, nl));
                m_errLine.erase(0, nl + 1);
            }
        } else if (got == 0 || (errno != EAGAIN && errno != EINTR)) {
            fd.reset();
        }
    }

    void feed()
    {
        const std::string& input = m_spec.input;
        const ssize_t sent = ::send(m_in.fd, input.data() + m_written, input.size() - m_written, MSG_NOSIGNAL);
        if (sent > 0)
            m_written += static_cast<size_t>(sent);
        else if (sent < 0 && errno != EAGAIN && errno != EINTR)
            m_in.reset(); // the child stopped reading; what it says on stderr explains why
        if (m_written >= input.size())
            m_in.reset();
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
            if (w == 0) {
                if (m_spec.cancel && m_spec.cancel->load()) {
                    m_result.cancelled = true;
                    killChild();
                } else if (std::chrono::steady_clock::now() >= m_deadline) {
                    m_result.timedOut = true;
                    killChild();
                } else {
                    ::usleep(10000);
                }
            }
        }
    }

    const ProcessSpec& m_spec;
    std::chrono::steady_clock::time_point m_deadline; // the limit counts from the spawn
    ProcessOutcome m_result;
    Fd m_in, m_out, m_err; // our ends: the child's stdin socket, its stdout and stderr pipes
    pid_t m_pid = -1;
    bool m_killed = false;
    int m_status = 0;
    size_t m_written = 0;
    std::string m_errLine;
    char m_buf[65536];
};

} // namespace

ProcessOutcome runProcess(const ProcessSpec& spec) { return Run(spec).run(); }

} // namespace headroom::detail
