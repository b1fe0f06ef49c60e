// `--waits=bpf`: each watched thread's time off a CPU, exactly, by the system call it slept in.
//
// Two scheduler tracepoints, nothing else. When a thread of a watched process leaves a CPU
// asleep (sched_switch, not preempted), it is marked asleep with its system call (the syscall
// number in its saved user registers; -1 outside one, as in a page fault) and whether the sleep
// is uninterruptible. When it is woken (sched_wakeup), the time since goes to the (thread,
// syscall, uninterruptible) entry of `waits`. The time between a wakeup or a preemption and the
// next sleep is on a CPU or runnable, summed per thread in `threads`. fathom reads both maps
// from user space and names each entry's kind of wait with the same function as the sampler.
//
// With `want_stacks` set at load, each sleep also keeps its kernel stack and its user stack
// (walked by frame pointers) in `stacks`, and `waits` is keyed by them too.
//
// With `long_sleep_ns` set at load, each sleep at least that long is also sent whole (thread,
// kind, stacks, when it began and ended) through the ring buffer `long_sleeps`, for fathom to
// lay against the step's slowest operations; so is each wait at least that long for a CPU, from
// a wakeup or a preemption to the thread's next switch onto a CPU (its `nr` RUNNABLE_NR).
//
// With `user_stack_ns` set at load too, each sleep in a system call at least that long also
// sends its thread's user stack, as bytes, through the ring buffer `user_stacks`: when the
// thread returns from that system call (raw sys_exit, the thread itself running again, its
// stack as it was when it fell asleep), its registers and up to USER_STACK_BYTES above its
// stack pointer, for fathom to unwind by the files' DWARF call frame information. Frame
// pointers cannot do it: the C library's wait functions keep none, and the walk stops there.
//
// No vmlinux.h: the two kernel structures read are declared here with only their fields, and
// their offsets are relocated at load time against the running kernel's BTF (CO-RE).

#include <linux/types.h>
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

struct task_struct___fathom {
	int pid;
	int tgid;
} __attribute__((preserve_access_index));

struct pt_regs___fathom {
	long orig_ax;
	unsigned long ip;
	unsigned long sp;
	unsigned long bp;
} __attribute__((preserve_access_index));

/* Set by fathom before loading: keep each sleep's stacks. */
const volatile __u8 want_stacks = 0;
/* Set by fathom before loading: send sleeps at least this long (0: none). */
const volatile __u64 long_sleep_ns = 0;
/* Set by fathom before loading: send the user stack of sleeps in a system call at least this
 * long (0: none). */
const volatile __u64 user_stack_ns = 0;

/* The state of one thread, kept by tid. */
struct thread {
	__u64 last;   /* when it last changed between asleep and not, ns (CLOCK_MONOTONIC) */
	__u64 cpu_ns; /* time on a CPU or runnable, up to `last` */
	__s32 nr;     /* while asleep: the system call, -1 outside one */
	__u8 asleep;
	__u8 uninterruptible;
	__u16 pad;
	__s32 kstack; /* while asleep, with stacks: its stacks' ids, negative when lost */
	__s32 ustack;
	__u32 tgid;
	__u32 pad2;
	__u64 runnable_since; /* woken or preempted and not yet on a CPU since, ns; 0: not */
	__u64 pending_start;  /* a long sleep whose user stack is still to send: its start; 0: none */
	__s32 pending_nr;     /* and its system call */
	__u32 pad3;
};

/* The `nr` of a long wait that was for a CPU, not a sleep. */
#define RUNNABLE_NR (-2)

/* One kind of sleep of one thread (with stacks, at one place). */
struct wait_key {
	__u32 tid;
	__s32 nr;
	__u32 uninterruptible;
	__s32 kstack;
	__s32 ustack;
	__u32 tgid;
};

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 22);
} long_sleeps SEC(".maps");

/* One sleep, whole: sent through `long_sleeps`. */
struct long_sleep {
	struct wait_key key;
	__u64 start; /* ns, CLOCK_MONOTONIC */
	__u64 end;
};

#define STACK_DEPTH 64

#define USER_STACK_CHUNK 4096
#define USER_STACK_CHUNKS 4
#define USER_STACK_BYTES (USER_STACK_CHUNK * USER_STACK_CHUNKS)

/* One long sleep's user stack: sent through `user_stacks`. */
struct user_stack {
	__u32 tid;
	__u32 tgid;
	__u64 start; /* the sleep's, as in its `long_sleep` */
	__u64 ip;    /* the user registers where it slept */
	__u64 sp;
	__u64 bp;
	__u32 len; /* bytes of `bytes` read, from `sp` up */
	__u32 pad;
	__u8 bytes[USER_STACK_BYTES];
};

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 24);
} user_stacks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_STACK_TRACE);
	__uint(max_entries, 16384);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, STACK_DEPTH * sizeof(__u64));
} stacks SEC(".maps");

/* The processes (tgids) whose threads are watched: filled by fathom. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, __u8);
} tgids SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 32768);
	__type(key, __u32);
	__type(value, struct thread);
} threads SEC(".maps");

/* Nanoseconds asleep by (thread, system call, uninterruptible). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, struct wait_key);
	__type(value, __u64);
} waits SEC(".maps");

/* Events the maps had no room for: fathom reports them. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} dropped SEC(".maps");

#define TASK_UNINTERRUPTIBLE 0x2
#define TASK_NOLOAD 0x400
#define TASK_REPORT 0x7f

static __always_inline void drop(void)
{
	__u32 zero = 0;
	__u64 *n = bpf_map_lookup_elem(&dropped, &zero);
	if (n)
		__sync_fetch_and_add(n, 1);
}

/* Sends `[start, end)` of thread `tid` whole, as a long sleep of `key`'s kind. */
static __always_inline void send_long(struct wait_key *key, __u64 start, __u64 end)
{
	struct long_sleep *l = bpf_ringbuf_reserve(&long_sleeps, sizeof(*l), 0);
	if (l) {
		l->key = *key;
		l->start = start;
		l->end = end;
		bpf_ringbuf_submit(l, 0);
	} else {
		drop();
	}
}

/* A watched thread goes onto a CPU: a long wait for it since its wakeup or preemption is sent. */
static __always_inline void on_cpu(struct task_struct___fathom *next, __u64 now)
{
	__u32 tid = BPF_CORE_READ(next, pid);
	struct thread *t = bpf_map_lookup_elem(&threads, &tid);
	if (!t || !t->runnable_since)
		return;
	__u64 since = t->runnable_since;
	t->runnable_since = 0;
	if (now - since < long_sleep_ns)
		return;
	struct wait_key key = {
		.tid = tid,
		.nr = RUNNABLE_NR,
		.kstack = -1,
		.ustack = -1,
		.tgid = t->tgid,
	};
	send_long(&key, since, now);
}

SEC("tp_btf/sched_switch")
int BPF_PROG(on_switch, _Bool preempt, struct task_struct___fathom *prev,
	     struct task_struct___fathom *next, unsigned int prev_state)
{
	if (long_sleep_ns)
		on_cpu(next, bpf_ktime_get_ns());
	__u32 tgid = BPF_CORE_READ(prev, tgid);
	if (!bpf_map_lookup_elem(&tgids, &tgid))
		return 0;
	__u32 tid = BPF_CORE_READ(prev, pid);
	__u64 now = bpf_ktime_get_ns();
	struct thread *t = bpf_map_lookup_elem(&threads, &tid);
	if (!t) {
		struct thread fresh = { .last = now };
		if (bpf_map_update_elem(&threads, &tid, &fresh, BPF_NOEXIST) == 0)
			t = bpf_map_lookup_elem(&threads, &tid);
		if (!t) {
			drop();
			return 0;
		}
	} else if (!t->asleep) {
		t->cpu_ns += now - t->last;
	}
	t->last = now;
	t->tgid = tgid;
	if (preempt || (prev_state & TASK_REPORT) == 0) {
		/* Preempted: runnable, waiting for a CPU again. */
		t->asleep = 0;
		t->runnable_since = now;
		return 0;
	}
	t->runnable_since = 0;
	struct pt_regs___fathom *regs = (void *)bpf_task_pt_regs((struct task_struct *)prev);
	t->nr = (__s32)BPF_CORE_READ(regs, orig_ax);
	t->uninterruptible = (prev_state & TASK_UNINTERRUPTIBLE) && !(prev_state & TASK_NOLOAD);
	t->kstack = -1;
	t->ustack = -1;
	if (want_stacks) {
		/* `prev` is still the current task here. */
		t->kstack = bpf_get_stackid(ctx, &stacks, 0);
		t->ustack = bpf_get_stackid(ctx, &stacks, BPF_F_USER_STACK);
	}
	t->asleep = 1;
	return 0;
}

SEC("tp_btf/sched_wakeup")
int BPF_PROG(on_wakeup, struct task_struct___fathom *p)
{
	__u32 tid = BPF_CORE_READ(p, pid);
	struct thread *t = bpf_map_lookup_elem(&threads, &tid);
	if (!t || !t->asleep)
		return 0;
	__u64 now = bpf_ktime_get_ns();
	struct wait_key key = {
		.tid = tid,
		.nr = t->nr,
		.uninterruptible = t->uninterruptible,
		.kstack = t->kstack,
		.ustack = t->ustack,
		.tgid = t->tgid,
	};
	__u64 slept = now - t->last;
	__u64 *ns = bpf_map_lookup_elem(&waits, &key);
	if (ns)
		__sync_fetch_and_add(ns, slept);
	else if (bpf_map_update_elem(&waits, &key, &slept, BPF_NOEXIST) != 0)
		drop();
	if (long_sleep_ns && slept >= long_sleep_ns)
		send_long(&key, t->last, now);
	if (user_stack_ns && slept >= user_stack_ns && t->nr >= 0) {
		t->pending_start = t->last;
		t->pending_nr = t->nr;
	}
	t->last = now;
	t->asleep = 0;
	/* Woken: runnable until it is on a CPU. */
	t->runnable_since = now;
	return 0;
}

/* A thread returns from a system call: if it slept long in it, its user stack is sent. */
SEC("tp_btf/sys_exit")
int BPF_PROG(on_sys_exit, struct pt_regs___fathom *regs, long ret)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct thread *t = bpf_map_lookup_elem(&threads, &tid);
	if (!t || !t->pending_start)
		return 0;
	__u64 start = t->pending_start;
	t->pending_start = 0;
	if ((__s32)BPF_CORE_READ(regs, orig_ax) != t->pending_nr)
		return 0;
	struct user_stack *u = bpf_ringbuf_reserve(&user_stacks, sizeof(*u), 0);
	if (!u) {
		drop();
		return 0;
	}
	u->tid = tid;
	u->tgid = t->tgid;
	u->start = start;
	u->ip = BPF_CORE_READ(regs, ip);
	u->sp = BPF_CORE_READ(regs, sp);
	u->bp = BPF_CORE_READ(regs, bp);
	u->len = 0;
	u->pad = 0;
	/* Chunk by chunk: the first that cannot be read (past the stack's top) ends it. */
	for (int i = 0; i < USER_STACK_CHUNKS; i++) {
		if (bpf_probe_read_user(&u->bytes[i * USER_STACK_CHUNK], USER_STACK_CHUNK,
					(void *)(u->sp + i * USER_STACK_CHUNK)) != 0)
			break;
		u->len += USER_STACK_CHUNK;
	}
	bpf_ringbuf_submit(u, 0);
	return 0;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
