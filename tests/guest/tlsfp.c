/* tlsfp: thread-local storage (%fs) and SSE/x87 floating point state survive syscalls. */
#define _GNU_SOURCE
#define ARCH_SET_FS 0x1002
#define ARCH_GET_FS 0x1003
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

/* libm-free helpers so the guest links without -lm (glibc static) */
static double my_sqrt(double x)
{
	double r;
	__asm__("sqrtsd %1, %0" : "=x"(r) : "x"(x));
	return r;
}

static double my_exp(double x)
{
	double term = 1.0, sum = 1.0;
	for (int i = 1; i < 40; i++) {
		term *= x / i;
		sum += term;
	}
	return sum;
}

static double my_sin(double x)
{
	double term = x, sum = x;
	for (int i = 1; i < 20; i++) {
		term *= -x * x / ((2 * i) * (2 * i + 1));
		sum += term;
	}
	return sum;
}

static __thread long tls_counter = 5;
static __thread char tls_buf[64] = "tls-initialised";
static __thread long tls_zero;

/* keep values in xmm registers across the syscall instruction itself */
static double fp_across_syscall(double x)
{
	double a = x * 1.5, b = x / 3.0, c = x + 0.25;
	__asm__ volatile("" : "+x"(a), "+x"(b), "+x"(c));
	syscall(SYS_getppid);
	__asm__ volatile("" : "+x"(a), "+x"(b), "+x"(c));
	syscall(SYS_getpid);
	return a + b * c;
}

static long double x87_across_syscall(long double x)
{
	long double y = x * 3.0L;
	__asm__ volatile("" : "+t"(y));
	syscall(SYS_gettid);
	return y / 7.0L;
}

int main(void)
{
	volatile double d = 1.0;
	for (int i = 1; i <= 20; i++) {
		d = d * 1.1 + my_sqrt((double)i);
		if (i % 5 == 0) {
			write(1, "", 0);
			printf("step %d d=%.6f\n", i, d);
		}
	}
	printf("sin(1)=%.6f exp(2)=%.6f\n", my_sin(1.0), my_exp(2.0));
	printf("fp_across_syscall(2)=%.6f\n", fp_across_syscall(2.0));
	printf("x87_across_syscall(10)=%.6Lf\n", x87_across_syscall(10.0L));

	printf("tls initial: counter=%ld buf=%s zero=%ld\n", tls_counter, tls_buf, tls_zero);
	for (int i = 0; i < 1000; i++) {
		tls_counter += i;
		if (i % 100 == 0)
			syscall(SYS_getppid);
	}
	tls_buf[0] = 'T';
	syscall(SYS_getpid);
	printf("tls after syscalls: counter=%ld buf=%s\n", tls_counter, tls_buf);

	/* the thread pointer: %fs:0 points to itself in both musl and glibc; ARCH_GET_FS agrees */
	uintptr_t self, fsbase = 0;
	__asm__ volatile("mov %%fs:0, %0" : "=r"(self));
	long r = syscall(SYS_arch_prctl, ARCH_GET_FS, &fsbase);
	printf("arch_prctl(ARCH_GET_FS)=%ld fsbase==fs:0: %s\n", r, fsbase == self ? "yes" : "no");
	printf("&tls_counter below fsbase: %s\n", (uintptr_t)&tls_counter < fsbase ? "yes" : "no");
	/* ARCH_SET_FS to the same value keeps everything working */
	r = syscall(SYS_arch_prctl, ARCH_SET_FS, fsbase);
	printf("arch_prctl(ARCH_SET_FS same)=%ld counter=%ld\n", r, tls_counter);
	r = syscall(SYS_arch_prctl, 0x9999, 0);
	printf("arch_prctl(bad code)=%ld\n", r);
	/* rounding mode (MXCSR) survives a syscall */
	unsigned int mxcsr = 0, mxcsr2 = 0;
	__asm__ volatile("stmxcsr %0" : "=m"(mxcsr));
	unsigned int want = (mxcsr & ~0x6000u) | 0x6000u; /* round toward zero */
	__asm__ volatile("ldmxcsr %0" : : "m"(want));
	syscall(SYS_getppid);
	__asm__ volatile("stmxcsr %0" : "=m"(mxcsr2));
	__asm__ volatile("ldmxcsr %0" : : "m"(mxcsr));
	printf("mxcsr rounding preserved: %s\n", (mxcsr2 & 0x6000u) == 0x6000u ? "yes" : "no");
	return 0;
}
