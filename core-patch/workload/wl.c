// SPDX-License-Identifier: GPL-2.0-only
/*
 * wl: the userland workload that core-patch/workload/run boots a checked
 * kernel with.  One static binary with one subcommand per kind of load;
 * each runs for the seconds it is given and prints one line
 *
 *	wl NAME: ok ITERATIONS iterations, DETAIL
 *
 * or "wl NAME: FAIL what" with a non-zero exit.  The point is to drive
 * the kernel's counters (reference counts, percpu_refs, sequence and id
 * counters) through their real users, not to measure anything.
 *
 *	wl fork SECS          fork/exec/wait and thread create/join storms
 *	wl hackbench SECS     hackbench-style senders/receivers, pipes and
 *	                      unix socketpairs
 *	wl tcp SECS           many TCP connections over loopback (v4 and v6)
 *	wl udp SECS           UDP datagrams among many sockets over loopback
 *	wl fileio DIR SECS    files on a real file system: write, fsync,
 *	                      rename, link, mmap, truncate, O_DIRECT, unlink
 *	wl procsys SECS       read every readable file under /proc and /sys
 *	wl ns SECS            children in new mount/uts/ipc/net/pid namespaces
 *	wl aio FILE SECS      io_setup/io_submit/io_destroy (a percpu_ref user)
 *	wl uring SECS         io_uring setup/submit/teardown (a percpu_ref user)
 *
 * and, for the overflow forecast, the paths whose counters move fastest:
 *
 *	wl timers SECS        POSIX timers created, armed, deleted (timer IDs)
 *	wl inodes SECS        pipes and sockets opened and closed (inode numbers)
 *	wl udpflood SECS      UDP to receivers that do not read (socket drops)
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/aio_abi.h>
#include <linux/io_uring.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char *cmd;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void fail(const char *what)
{
	printf("wl %s: FAIL %s: %s\n", cmd, what, strerror(errno));
	fflush(stdout);
	exit(1);
}

static void ok(unsigned long iterations, const char *detail)
{
	printf("wl %s: ok %lu iterations, %s\n", cmd, iterations, detail);
	fflush(stdout);
	exit(0);
}

/* ---- fork: process and thread creation storms ---- */

static void *thread_fn(void *arg)
{
	return arg;
}

static void run_fork(double secs)
{
	double end = now() + secs;
	unsigned long rounds = 0, procs = 0, threads = 0;

	while (now() < end) {
		pid_t pids[32];
		pthread_t tids[16];
		int i;

		for (i = 0; i < 32; i++) {
			pids[i] = fork();
			if (pids[i] < 0)
				fail("fork");
			if (pids[i] == 0) {
				/* half exec a real program, half just exit */
				if (i & 1)
					execl("/bin/true", "true", (char *)NULL);
				_exit(0);
			}
		}
		for (i = 0; i < 32; i++) {
			int st;

			if (waitpid(pids[i], &st, 0) < 0)
				fail("waitpid");
			if (!WIFEXITED(st) || WEXITSTATUS(st))
				fail("child status");
		}
		procs += 32;
		for (i = 0; i < 16; i++)
			if (pthread_create(&tids[i], NULL, thread_fn, NULL))
				fail("pthread_create");
		for (i = 0; i < 16; i++)
			pthread_join(tids[i], NULL);
		threads += 16;
		rounds++;
	}
	char detail[128];

	snprintf(detail, sizeof(detail), "%lu processes, %lu threads",
		 procs, threads);
	ok(rounds, detail);
}

/* ---- hackbench: groups of senders and receivers ---- */

#define HB_GROUPS 4
#define HB_FDS 10	/* senders and receivers per group */
#define HB_LOOPS 50	/* messages per sender to each receiver */
#define HB_MSG 100

static void hb_channel(int use_pipe, int fds[2])
{
	if (use_pipe) {
		if (pipe(fds))
			fail("pipe");
	} else if (socketpair(AF_UNIX, SOCK_STREAM, 0, fds)) {
		fail("socketpair");
	}
}

static void hb_read_all(int fd, size_t len)
{
	char buf[HB_MSG * 16];

	while (len) {
		size_t want = len < sizeof(buf) ? len : sizeof(buf);
		ssize_t n = read(fd, buf, want);

		if (n <= 0)
			_exit(1);
		len -= n;
	}
}

/* One hackbench round: every sender writes to every receiver of its group. */
static void hb_round(int use_pipe)
{
	pid_t pids[HB_GROUPS * HB_FDS * 2];
	int npids = 0, g, i, j;

	for (g = 0; g < HB_GROUPS; g++) {
		int wr[HB_FDS];

		for (i = 0; i < HB_FDS; i++) {
			int fds[2];

			hb_channel(use_pipe, fds);
			pids[npids] = fork();
			if (pids[npids] < 0)
				fail("fork");
			if (pids[npids] == 0) {
				close(fds[1]);
				hb_read_all(fds[0], (size_t)HB_LOOPS * HB_FDS * HB_MSG);
				_exit(0);
			}
			npids++;
			close(fds[0]);
			wr[i] = fds[1];
		}
		for (i = 0; i < HB_FDS; i++) {
			pids[npids] = fork();
			if (pids[npids] < 0)
				fail("fork");
			if (pids[npids] == 0) {
				char msg[HB_MSG];
				int l;

				memset(msg, 'x', sizeof(msg));
				for (l = 0; l < HB_LOOPS; l++)
					for (j = 0; j < HB_FDS; j++)
						if (write(wr[j], msg, sizeof(msg)) != sizeof(msg))
							_exit(1);
				_exit(0);
			}
			npids++;
		}
		for (i = 0; i < HB_FDS; i++)
			close(wr[i]);
	}
	for (i = 0; i < npids; i++) {
		int st;

		if (waitpid(pids[i], &st, 0) < 0)
			fail("waitpid");
		if (!WIFEXITED(st) || WEXITSTATUS(st)) {
			errno = EIO;
			fail("a sender or receiver failed");
		}
	}
}

static void run_hackbench(double secs)
{
	double end = now() + secs;
	unsigned long rounds = 0;

	while (now() < end) {
		hb_round(rounds & 1);
		rounds++;
	}
	ok(rounds, "rounds alternate pipes and unix socketpairs, "
	   "4 groups x 10 senders x 10 receivers");
}

/* ---- tcp: many connections over loopback ---- */

#define TCP_CONNS 128

static void raise_fd_limit(void)
{
	struct rlimit rl = { 4096, 4096 };

	setrlimit(RLIMIT_NOFILE, &rl);
}

/* One round: N connections to a listener in this process, an echo each. */
static int tcp_round(int family)
{
	struct sockaddr_storage ss = { 0 };
	socklen_t sl;
	int lfd, cli[TCP_CONNS], srv[TCP_CONNS], i;
	char buf[512];

	lfd = socket(family, SOCK_STREAM, 0);
	if (lfd < 0)
		return -1;	/* no IPv6 in this kernel */
	if (family == AF_INET) {
		struct sockaddr_in *sin = (struct sockaddr_in *)&ss;

		sin->sin_family = AF_INET;
		sin->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		sl = sizeof(*sin);
	} else {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&ss;

		sin6->sin6_family = AF_INET6;
		sin6->sin6_addr = in6addr_loopback;
		sl = sizeof(*sin6);
	}
	if (bind(lfd, (struct sockaddr *)&ss, sl)) {
		close(lfd);
		return -1;	/* no ::1 */
	}
	if (listen(lfd, TCP_CONNS * 2) || getsockname(lfd, (struct sockaddr *)&ss, &sl))
		fail("listen");
	for (i = 0; i < TCP_CONNS; i++) {
		cli[i] = socket(family, SOCK_STREAM, 0);
		if (cli[i] < 0 || connect(cli[i], (struct sockaddr *)&ss, sl))
			fail("connect");
		srv[i] = accept(lfd, NULL, NULL);
		if (srv[i] < 0)
			fail("accept");
	}
	memset(buf, 'y', sizeof(buf));
	for (i = 0; i < TCP_CONNS; i++) {
		if (write(cli[i], buf, sizeof(buf)) != sizeof(buf))
			fail("tcp write");
		if (recv(srv[i], buf, sizeof(buf), MSG_WAITALL) != sizeof(buf))
			fail("tcp read");
		if (write(srv[i], buf, 64) != 64)
			fail("tcp echo");
		if (recv(cli[i], buf, 64, MSG_WAITALL) != 64)
			fail("tcp echo read");
	}
	/* close from both ends, half of them with a reset */
	for (i = 0; i < TCP_CONNS; i++) {
		if (i & 1) {
			struct linger lg = { 1, 0 };

			setsockopt(cli[i], SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
		} else {
			shutdown(srv[i], SHUT_WR);
		}
		close(cli[i]);
		close(srv[i]);
	}
	close(lfd);
	return 0;
}

static void run_tcp(double secs)
{
	double end = now() + secs;
	unsigned long rounds = 0, v6 = 0;

	raise_fd_limit();
	while (now() < end) {
		if (tcp_round(AF_INET))
			fail("tcp over 127.0.0.1");
		if (tcp_round(AF_INET6) == 0)
			v6++;
		rounds++;
	}
	char detail[128];

	snprintf(detail, sizeof(detail), "%d connections a round, %lu rounds "
		 "also over ::1", TCP_CONNS, v6);
	ok(rounds, detail);
}

/* ---- udp: datagrams among many sockets ---- */

#define UDP_SOCKS 64

/*
 * A UDP socket bound to an ephemeral loopback port, whose address goes to
 * *addr; RCVBUF > 0 sets SO_RCVBUF (the kernel raises it to its minimum).
 */
static int udp_loopback_socket(struct sockaddr_in *addr, int rcvbuf)
{
	socklen_t sl = sizeof(*addr);
	int fd = socket(AF_INET, SOCK_DGRAM, 0);

	if (fd < 0)
		fail("udp socket");
	if (rcvbuf > 0)
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
	memset(addr, 0, sizeof(*addr));
	addr->sin_family = AF_INET;
	addr->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(fd, (struct sockaddr *)addr, sizeof(*addr)) ||
	    getsockname(fd, (struct sockaddr *)addr, &sl))
		fail("udp bind");
	return fd;
}

static void run_udp(double secs)
{
	double end = now() + secs;
	unsigned long rounds = 0, datagrams = 0;
	struct sockaddr_in addr[UDP_SOCKS];
	int fd[UDP_SOCKS], i;
	char buf[1400];

	memset(buf, 'u', sizeof(buf));
	while (now() < end) {
		for (i = 0; i < UDP_SOCKS; i++)
			fd[i] = udp_loopback_socket(&addr[i], 0);
		/* each socket sends to the next; odd ones are connected */
		for (i = 0; i < UDP_SOCKS; i++) {
			struct sockaddr_in *to = &addr[(i + 1) % UDP_SOCKS];
			int k;

			if ((i & 1) && connect(fd[i], (struct sockaddr *)to, sizeof(*to)))
				fail("udp connect");
			for (k = 0; k < 8; k++) {
				ssize_t n = (i & 1) ? send(fd[i], buf, sizeof(buf), 0) :
					sendto(fd[i], buf, sizeof(buf), 0,
					       (struct sockaddr *)to, sizeof(*to));
				if (n != sizeof(buf))
					fail("udp send");
			}
		}
		for (i = 0; i < UDP_SOCKS; i++) {
			int k;

			for (k = 0; k < 8; k++) {
				if (recv(fd[i], buf, sizeof(buf), MSG_DONTWAIT) < 0 &&
				    errno != EAGAIN)
					fail("udp recv");
				datagrams++;
			}
			close(fd[i]);
		}
		rounds++;
	}
	char detail[128];

	snprintf(detail, sizeof(detail), "%d sockets a round, %lu datagrams",
		 UDP_SOCKS, datagrams);
	ok(rounds, detail);
}

/* ---- fileio: a real file system ---- */

static void write_file(const char *path, size_t len, int flags)
{
	static char buf[65536] __attribute__((aligned(4096)));
	int fd = open(path, O_CREAT | O_TRUNC | O_WRONLY | flags, 0644);
	size_t done = 0;

	if (fd < 0)
		fail(path);
	memset(buf, 'f', sizeof(buf));
	while (done < len) {
		size_t n = len - done < sizeof(buf) ? len - done : sizeof(buf);

		if (write(fd, buf, n) != (ssize_t)n)
			fail("write");
		done += n;
	}
	if (fsync(fd))
		fail("fsync");
	close(fd);
}

static void run_fileio(const char *dir, double secs)
{
	double end = now() + secs;
	unsigned long rounds = 0;
	char a[512], b[512], d[256];

	while (now() < end) {
		int i, fd;

		snprintf(d, sizeof(d), "%s/wl.%d.%lu", dir, getpid(), rounds);
		if (mkdir(d, 0755))
			fail("mkdir");
		for (i = 0; i < 16; i++) {
			snprintf(a, sizeof(a), "%s/f%d", d, i);
			write_file(a, 4096 * (i + 1), 0);
		}
		/* O_DIRECT goes straight to the block layer */
		snprintf(a, sizeof(a), "%s/direct", d);
		write_file(a, 1 << 20, O_DIRECT);
		snprintf(a, sizeof(a), "%s/f3", d);
		snprintf(b, sizeof(b), "%s/renamed", d);
		if (rename(a, b) || link(b, a))
			fail("rename/link");
		snprintf(a, sizeof(a), "%s/symlink", d);
		if (symlink(b, a))
			fail("symlink");
		fd = open(b, O_RDWR);
		if (fd < 0)
			fail("open renamed");
		char *p = mmap(NULL, 16384, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);

		if (p == MAP_FAILED)
			fail("mmap");
		memset(p, 'm', 16384);
		if (msync(p, 16384, MS_SYNC))
			fail("msync");
		munmap(p, 16384);
		if (ftruncate(fd, 1000) || fallocate(fd, 0, 0, 1 << 18))
			fail("truncate/fallocate");
		close(fd);
		/* read everything back, then remove the directory */
		DIR *dp = opendir(d);
		struct dirent *de;

		if (!dp)
			fail("opendir");
		while ((de = readdir(dp))) {
			char buf[8192];

			if (de->d_name[0] == '.')
				continue;
			snprintf(a, sizeof(a), "%s/%s", d, de->d_name);
			fd = open(a, O_RDONLY);
			if (fd >= 0) {
				while (read(fd, buf, sizeof(buf)) > 0)
					;
				close(fd);
			}
			if (unlink(a))
				fail("unlink");
		}
		closedir(dp);
		if (rmdir(d))
			fail("rmdir");
		sync();
		rounds++;
	}
	ok(rounds, "16 files + 1 MiB O_DIRECT + mmap/truncate/fallocate a round");
}

/* ---- procsys: read every readable file under /proc and /sys ---- */

static unsigned long files_read, files_skipped;
static double procsys_end;

/* Files whose read blocks, has side effects, or is not information. */
static int unsafe(const char *path, const char *name)
{
	static const char *const names[] = {
		"kmsg", "kcore", "trace_pipe", "trace_pipe_raw", "sysrq-trigger",
		"pagemap", "kpagecount", "kpageflags", "kpagecgroup", "mem",
		"clear_refs", "breakpoint", "uevent_seqnum_wait", NULL,
	};
	int i;

	for (i = 0; names[i]; i++)
		if (!strcmp(name, names[i]))
			return 1;
	/* another task's memory: reading it races with its exit, and is huge */
	if (strstr(path, "/task/") || !strncmp(path, "/sys/kernel/debug", 17) ||
	    !strncmp(path, "/sys/firmware", 13) || !strncmp(path, "/proc/sys/vm/drop_caches", 24))
		return 1;
	/*
	 * Left behind by a KUnit case, not by the kernel: up to Linux 6.12,
	 * sysctl_test_register_sysctl_sz_invalid_extra_value() registers a
	 * ctl_table on its stack as foo/qux and never unregisters it, so
	 * listing /proc/sys/foo after the boot-time suites dereferences a dead
	 * stack frame (an oops in proc_sys_readdir(), with or without the
	 * series; the case is gone from 7.2).
	 */
	if (!strcmp(path, "/proc/sys/foo"))
		return 1;
	return 0;
}

static void on_alarm(int sig)
{
	(void)sig;
}

static void walk(const char *dir, int depth)
{
	DIR *dp;
	struct dirent *de;

	if (depth > 12 || now() > procsys_end)
		return;
	dp = opendir(dir);
	if (!dp)
		return;
	while ((de = readdir(dp)) && now() < procsys_end) {
		char path[4096];
		struct stat st;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		/* /proc/<pid>: only our own, /proc/self */
		if (!strcmp(dir, "/proc") && de->d_name[0] >= '0' && de->d_name[0] <= '9' &&
		    atoi(de->d_name) != getpid())
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (lstat(path, &st))
			continue;
		if (S_ISLNK(st.st_mode))
			continue;
		if (unsafe(path, de->d_name)) {
			files_skipped++;
			continue;
		}
		if (S_ISDIR(st.st_mode)) {
			walk(path, depth + 1);
		} else if (S_ISREG(st.st_mode) && (st.st_mode & 0444)) {
			char buf[16384];
			int fd, total = 0;
			ssize_t n;

			alarm(2);	/* a read that blocks is cut, not waited for */
			fd = open(path, O_RDONLY | O_NONBLOCK);
			if (fd >= 0) {
				while (total < (1 << 18) && (n = read(fd, buf, sizeof(buf))) > 0)
					total += n;
				close(fd);
				files_read++;
			}
			alarm(0);
		}
	}
	closedir(dp);
}

static void run_procsys(double secs)
{
	struct sigaction sa = { .sa_handler = on_alarm };
	unsigned long passes = 0;

	sigaction(SIGALRM, &sa, NULL);	/* no SA_RESTART: the read returns EINTR */
	procsys_end = now() + secs;
	do {
		walk("/proc", 0);
		walk("/sys", 0);
		passes++;
	} while (now() < procsys_end);
	char detail[128];

	snprintf(detail, sizeof(detail), "%lu files read, %lu skipped as unsafe",
		 files_read, files_skipped);
	ok(passes, detail);
}

/* ---- ns: children in new namespaces ---- */

static int ns_child(void *arg)
{
	struct ifreq ifr = { 0 };
	int fd;

	(void)arg;
	if (sethostname("wl-ns", 5))
		return 1;
	/* bring up this namespace's loopback and use it */
	fd = socket(AF_INET, SOCK_DGRAM, 0);
	if (fd < 0)
		return 2;
	strcpy(ifr.ifr_name, "lo");
	if (ioctl(fd, SIOCGIFFLAGS, &ifr) == 0) {
		ifr.ifr_flags |= IFF_UP;
		ioctl(fd, SIOCSIFFLAGS, &ifr);
	}
	close(fd);
	if (mount("none", "/", NULL, MS_REC | MS_PRIVATE, NULL))
		return 3;
	if (mount("wl", "/mnt", "tmpfs", 0, "size=1m"))
		return 4;
	if (umount("/mnt"))
		return 5;
	return getpid() == 1 ? 0 : 6;	/* the first task of the new pid ns */
}

static void run_ns(double secs)
{
	static char stack[65536] __attribute__((aligned(16)));
	double end = now() + secs;
	unsigned long rounds = 0;

	while (now() < end) {
		int st;
		pid_t pid = clone(ns_child, stack + sizeof(stack),
				  CLONE_NEWNS | CLONE_NEWUTS | CLONE_NEWIPC |
				  CLONE_NEWNET | CLONE_NEWPID | SIGCHLD, NULL);

		if (pid < 0)
			fail("clone with new namespaces");
		if (waitpid(pid, &st, 0) < 0)
			fail("waitpid");
		if (!WIFEXITED(st) || WEXITSTATUS(st)) {
			errno = WIFEXITED(st) ? WEXITSTATUS(st) : EINTR;
			fail("namespace child (errno = its step)");
		}
		rounds++;
	}
	ok(rounds, "mount+uts+ipc+net+pid namespaces a child");
}

/* ---- aio: a percpu_ref user (ctx->users, ctx->reqs) ---- */

static void run_aio(const char *file, double secs)
{
	static char buf[4096] __attribute__((aligned(4096)));
	double end = now() + secs;
	unsigned long rounds = 0;
	int fd = open(file, O_RDWR | O_CREAT, 0644);

	if (fd < 0)
		fail(file);
	if (write(fd, buf, sizeof(buf)) != sizeof(buf))
		fail("write");
	while (now() < end) {
		aio_context_t ctx = 0;
		struct iocb cb = { 0 }, *cbs[1] = { &cb };
		struct io_event ev;

		if (syscall(SYS_io_setup, 8, &ctx))
			fail("io_setup");
		cb.aio_fildes = fd;
		cb.aio_lio_opcode = IOCB_CMD_PREAD;
		cb.aio_buf = (uintptr_t)buf;
		cb.aio_nbytes = sizeof(buf);
		if (syscall(SYS_io_submit, ctx, 1, cbs) != 1)
			fail("io_submit");
		if (syscall(SYS_io_getevents, ctx, 1, 1, &ev, NULL) != 1)
			fail("io_getevents");
		/* io_destroy kills the percpu_refs and waits for the release */
		if (syscall(SYS_io_destroy, ctx))
			fail("io_destroy");
		rounds++;
	}
	close(fd);
	ok(rounds, "io_setup + one read + io_destroy a round");
}

/* ---- uring: a percpu_ref user (ctx->refs) ---- */

static void run_uring(double secs)
{
	double end = now() + secs;
	unsigned long rounds = 0;

	while (now() < end) {
		struct io_uring_params p = { 0 };
		int fd = syscall(__NR_io_uring_setup, 4, &p);

		if (fd < 0) {
			if (errno == ENOSYS || errno == EPERM) {
				/* not in this kernel, or io_uring_disabled */
				ok(0, "io_uring not available");
			}
			fail("io_uring_setup");
		}
		size_t sq_len = p.sq_off.array + p.sq_entries * sizeof(unsigned);
		size_t cq_len = p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe);
		size_t len = sq_len > cq_len ? sq_len : cq_len;
		char *ring = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE,
				  fd, IORING_OFF_SQ_RING);
		struct io_uring_sqe *sqes = mmap(NULL, p.sq_entries * sizeof(*sqes),
						 PROT_READ | PROT_WRITE,
						 MAP_SHARED | MAP_POPULATE, fd,
						 IORING_OFF_SQES);

		if (ring == MAP_FAILED || sqes == MAP_FAILED)
			fail("io_uring mmap");
		unsigned *tail = (unsigned *)(ring + p.sq_off.tail);
		unsigned *array = (unsigned *)(ring + p.sq_off.array);
		unsigned mask = *(unsigned *)(ring + p.sq_off.ring_mask);
		unsigned t = *tail;

		memset(&sqes[t & mask], 0, sizeof(*sqes));
		sqes[t & mask].opcode = IORING_OP_NOP;
		array[t & mask] = t & mask;
		__atomic_store_n(tail, t + 1, __ATOMIC_RELEASE);
		if (syscall(__NR_io_uring_enter, fd, 1, 1, IORING_ENTER_GETEVENTS,
			    NULL, 0) != 1)
			fail("io_uring_enter");
		munmap(sqes, p.sq_entries * sizeof(*sqes));
		munmap(ring, len);
		close(fd);	/* the ring's teardown kills ctx->refs */
		rounds++;
	}
	ok(rounds, "io_uring_setup + one NOP + close a round");
}

/* ---- timers: POSIX timer IDs, armed and deleted ---- */

#define TIMERS 64

static void run_timers(double secs)
{
	double end = now() + secs;
	unsigned long created = 0;
	struct sigevent sev = { .sigev_notify = SIGEV_NONE };
	struct itimerspec its = { .it_value = { .tv_nsec = 1000 } };
	timer_t t[TIMERS];
	int i;

	while (now() < end) {
		for (i = 0; i < TIMERS; i++) {
			if (timer_create(CLOCK_MONOTONIC, &sev, &t[i]))
				fail("timer_create");
			if (timer_settime(t[i], 0, &its, NULL))
				fail("timer_settime");
		}
		for (i = 0; i < TIMERS; i++)
			if (timer_delete(t[i]))
				fail("timer_delete");
		created += TIMERS;
	}
	ok(created, "timers created, armed and deleted");
}

/* ---- inodes: every pipe and socket takes an inode number ---- */

static void run_inodes(double secs)
{
	double end = now() + secs;
	unsigned long n = 0;
	int p[2], sv[2];

	while (now() < end) {
		if (pipe(p))
			fail("pipe");
		close(p[0]);
		close(p[1]);
		if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv))
			fail("socketpair");
		close(sv[0]);
		close(sv[1]);
		n += 4;
	}
	ok(n, "pipe and socket inodes allocated and freed");
}

/* ---- udpflood: datagrams to full receive queues, which drop them ---- */

#define FLOOD_SOCKS 8

static void run_udpflood(double secs)
{
	double end = now() + secs;
	unsigned long sent = 0;
	struct sockaddr_in addr[FLOOD_SOCKS];
	int rx[FLOOD_SOCKS], tx, i;
	char buf[512];

	memset(buf, 'f', sizeof(buf));
	/* the smallest receive buffer: most datagrams are dropped */
	for (i = 0; i < FLOOD_SOCKS; i++)
		rx[i] = udp_loopback_socket(&addr[i], 1);
	tx = socket(AF_INET, SOCK_DGRAM, 0);
	if (tx < 0)
		fail("udp socket");
	while (now() < end) {
		for (i = 0; i < FLOOD_SOCKS; i++) {
			if (sendto(tx, buf, sizeof(buf), MSG_DONTWAIT,
				   (struct sockaddr *)&addr[i], sizeof(addr[i])) > 0)
				sent++;
		}
		/* now and then a receiver reads one, so that it is not idle */
		if (!(sent & 1023))
			recv(rx[sent % FLOOD_SOCKS], buf, sizeof(buf), MSG_DONTWAIT);
	}
	for (i = 0; i < FLOOD_SOCKS; i++)
		close(rx[i]);
	close(tx);
	ok(sent, "datagrams sent to receivers that drop most of them");
}

static double secs_arg(const char *s)
{
	double v = atof(s);

	if (v <= 0) {
		fprintf(stderr, "wl: bad duration '%s'\n", s);
		exit(2);
	}
	return v;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc < 3) {
		fprintf(stderr, "usage: wl fork|hackbench|tcp|udp|procsys|ns|uring|"
				"timers|inodes|udpflood SECS\n"
				"       wl fileio DIR SECS | wl aio FILE SECS\n");
		return 2;
	}
	cmd = argv[1];
	if (!strcmp(cmd, "fork"))
		run_fork(secs_arg(argv[2]));
	else if (!strcmp(cmd, "hackbench"))
		run_hackbench(secs_arg(argv[2]));
	else if (!strcmp(cmd, "tcp"))
		run_tcp(secs_arg(argv[2]));
	else if (!strcmp(cmd, "udp"))
		run_udp(secs_arg(argv[2]));
	else if (!strcmp(cmd, "procsys"))
		run_procsys(secs_arg(argv[2]));
	else if (!strcmp(cmd, "ns"))
		run_ns(secs_arg(argv[2]));
	else if (!strcmp(cmd, "uring"))
		run_uring(secs_arg(argv[2]));
	else if (!strcmp(cmd, "timers"))
		run_timers(secs_arg(argv[2]));
	else if (!strcmp(cmd, "inodes"))
		run_inodes(secs_arg(argv[2]));
	else if (!strcmp(cmd, "udpflood"))
		run_udpflood(secs_arg(argv[2]));
	else if (!strcmp(cmd, "fileio") && argc > 3)
		run_fileio(argv[2], secs_arg(argv[3]));
	else if (!strcmp(cmd, "aio") && argc > 3)
		run_aio(argv[2], secs_arg(argv[3]));
	fprintf(stderr, "wl: unknown command or missing argument: %s\n", cmd);
	return 2;
}
