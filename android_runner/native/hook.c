#define _GNU_SOURCE
#include "hook.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "io.h"

void hook_run(const hook_cfg *h, long n, const char *phase) {
  if (!h->path) return;
  char dir[4200], parent[4200];
  snprintf(parent, sizeof parent, "%s/samples", h->state_dir);
  snprintf(dir, sizeof dir, "%s/samples/%ld", h->state_dir, n);
  mkdir(parent, 0755);
  mkdir(dir, 0755);
  int fds[2];
  if (pipe(fds) != 0) return;
  pid_t pid = fork();
  if (pid == 0) {
    setpgid(0, 0);
    int devnull = open("/dev/null", O_RDWR);
    if (devnull >= 0) dup2(devnull, 0);
    dup2(fds[1], 1); /* stdout is the protocol stream: only the hook's NOTE lines reach it, through us */
    close(fds[0]);
    close(fds[1]);
    execlp("sh", "sh", h->path, "hook", dir, phase, (char *)NULL);
    _exit(127);
  }
  close(fds[1]);
  if (pid < 0) {
    close(fds[0]);
    return;
  }
  setpgid(pid, pid);
  double end = now_s() + h->timeout_s;
  char buf[2048];
  size_t have = 0;
  int killed = 0;
  for (;;) {
    double left = end - now_s();
    if (left <= 0) {
      kill(-pid, SIGKILL);
      kill(pid, SIGKILL);
      killed = 1;
      break;
    }
    struct pollfd p = {fds[0], POLLIN, 0};
    int r = poll(&p, 1, left > 1.0 ? 1000 : (int)(left * 1000) + 1);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) continue;
    ssize_t k = read(fds[0], buf + have, sizeof buf - 1 - have);
    if (k <= 0) break;
    have += (size_t)k;
    char *nl;
    while ((nl = memchr(buf, '\n', have)) != NULL) {
      *nl = 0;
      if (strncmp(buf, "EDGEFARM NOTE ", 14) == 0) note(buf + 14);
      size_t used = (size_t)(nl + 1 - buf);
      memmove(buf, nl + 1, have - used);
      have -= used;
    }
    if (have == sizeof buf - 1) have = 0; /* an overlong line: dropped */
  }
  close(fds[0]);
  int st;
  while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
  }
  if (killed) {
    char msg[200];
    snprintf(msg, sizeof msg, "warning: the %s hook of sample %ld ran past its %g s limit and was stopped",
             phase, n, h->timeout_s);
    note(msg);
  }
}
