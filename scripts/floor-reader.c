// floor-reader: the least a streaming client can do, as the floor beside the serving tools in
// docs/peers.md (scripts/peers.py compiles and runs it). One thread, one epoll loop, one
// keep-alive connection per slot; each slot sends a streamed chat request, reads its answer with
// recvmsg and SO_TIMESTAMPNS (the kernel's receive time of the newest data read), and sends the
// next when the answer's chunked body ends, until N requests are answered. No HTTP library, no
// JSON parser: a content event is a `"content":"` followed by text. What it cannot get below on a
// machine (its read delays, its CPU per request) no client can.
//
//   floor-reader PORT C N   prints one JSON line: rps, ttft and itl (ms), read_delay (ms, each
//                           request's longest delay from the kernel's stamp to the read) and
//                           ttft_coalesced (share of first tokens read with the next event)
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static long long now_ns(void) {
	struct timespec t;
	clock_gettime(CLOCK_REALTIME, &t); // the clock SO_TIMESTAMPNS stamps with
	return t.tv_sec * 1000000000LL + t.tv_nsec;
}

static const char body[] =
	"{\"model\":\"mock\",\"messages\":[{\"role\":\"user\",\"content\":\"the quick brown fox the quick "
	"brown fox the quick brown fox the quick brown fox the quick brown fox the quick brown fox the "
	"quick brown fox the quick brown fox\"}],\"max_tokens\":32,\"stream\":true}";

enum { TAIL = 16 }; // bytes of a read kept to find a pattern split across two reads

struct slot {
	int fd;
	long long sent, last, maxdelay; // request written; newest content event; longest read delay
	int events;                      // content events of this answer
	char tail[TAIL];
	int tailn;
};

static char req[1024];
static int reqlen;
static double *ttft, *itl, *delays;
static long nttft, nitl, ndelays, coalesced, done, started, total;

static void die(const char *what) {
	perror(what);
	exit(1);
}

static void send_request(struct slot *s) {
	if (write(s->fd, req, reqlen) != reqlen)
		die("write");
	s->sent = now_ns();
	s->events = 0;
	s->maxdelay = 0;
	s->tailn = 0;
	started++;
}

// count returns how many content events buf holds (a `"content":"` not followed by `"`).
static int count(const char *buf, long n) {
	static const char pat[] = "\"content\":\"";
	int k = 0;
	for (const char *p = buf; (p = memmem(p, n - (p - buf), pat, sizeof pat - 1)) != NULL; p++) {
		const char *after = p + sizeof pat - 1;
		if (after < buf + n && *after != '"')
			k++;
	}
	return k;
}

// answered takes one read of slot s (n bytes in buf, stamped at ts); it reports whether the
// answer's body ended.
static int answered(struct slot *s, const char *buf, long n, long long ts) {
	static char scan[16384 + TAIL];
	memcpy(scan, s->tail, s->tailn);
	memcpy(scan + s->tailn, buf, n);
	long m = s->tailn + n;
	int k = count(scan, m);
	if (k > 0) {
		if (s->events == 0) {
			ttft[nttft++] = (ts - s->sent) / 1e6;
			if (k > 1)
				coalesced++;
		} else {
			itl[nitl++] = (ts - s->last) / 1e6;
		}
		for (int i = 1; i < k; i++)
			itl[nitl++] = 0; // events read together: no gap between them
		s->events += k;
		s->last = ts;
	}
	s->tailn = m < TAIL ? (int)m : TAIL;
	memcpy(s->tail, scan + m - s->tailn, s->tailn);
	return m >= 5 && memcmp(scan + m - 5, "0\r\n\r\n", 5) == 0;
}

int main(int argc, char **argv) {
	if (argc != 4) {
		fprintf(stderr, "usage: floor-reader PORT C N\n");
		return 2;
	}
	int port = atoi(argv[1]), c = atoi(argv[2]);
	total = atol(argv[3]);
	reqlen = snprintf(req, sizeof req,
		"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nContent-Type: application/json\r\n"
		"Accept: text/event-stream\r\nContent-Length: %zu\r\n\r\n%s", port, sizeof body - 1, body);
	ttft = malloc(sizeof(double) * total);
	delays = malloc(sizeof(double) * total);
	itl = malloc(sizeof(double) * total * 64);
	struct slot *slots = calloc(c, sizeof *slots);
	int ep = epoll_create1(0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
	inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
	long long t0 = now_ns();
	for (int i = 0; i < c && started < total; i++) {
		int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;
		if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a) != 0)
			die("connect");
		setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof one);
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
		slots[i].fd = fd;
		struct epoll_event e = {.events = EPOLLIN, .data.ptr = &slots[i]};
		epoll_ctl(ep, EPOLL_CTL_ADD, fd, &e);
		send_request(&slots[i]);
	}
	static char buf[16384], oob[256];
	struct epoll_event evs[512];
	while (done < total) {
		int n = epoll_wait(ep, evs, 512, 10000);
		if (n <= 0)
			die("epoll_wait (no answer for 10 s)");
		for (int k = 0; k < n; k++) {
			struct slot *s = evs[k].data.ptr;
			struct iovec iov = {buf, sizeof buf};
			struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = oob, .msg_controllen = sizeof oob};
			long r = recvmsg(s->fd, &m, MSG_DONTWAIT);
			long long t = now_ns(), ts = t;
			if (r == 0) {
				fprintf(stderr, "floor-reader: the server closed a connection\n");
				return 1;
			}
			if (r < 0)
				continue;
			for (struct cmsghdr *h = CMSG_FIRSTHDR(&m); h; h = CMSG_NXTHDR(&m, h))
				if (h->cmsg_level == SOL_SOCKET && h->cmsg_type == SCM_TIMESTAMPNS) {
					struct timespec *st = (struct timespec *)CMSG_DATA(h);
					ts = st->tv_sec * 1000000000LL + st->tv_nsec;
				}
			if (t - ts > s->maxdelay)
				s->maxdelay = t - ts;
			if (!answered(s, buf, r, ts))
				continue;
			delays[ndelays++] = s->maxdelay / 1e6;
			done++;
			if (started < total)
				send_request(s);
		}
	}
	double wall = (now_ns() - t0) / 1e9;
	printf("{\"rps\": %.3f, \"ttft_coalesced\": %.6f, \"read_delay\": [", done / wall, nttft ? (double)coalesced / nttft : 0.0);
	for (long i = 0; i < ndelays; i++)
		printf("%s%.4f", i ? "," : "", delays[i]);
	printf("], \"ttft\": [");
	for (long i = 0; i < nttft; i++)
		printf("%s%.4f", i ? "," : "", ttft[i]);
	printf("], \"itl\": [");
	for (long i = 0; i < nitl; i++)
		printf("%s%.4f", i ? "," : "", itl[i]);
	printf("]}\n");
	return 0;
}
