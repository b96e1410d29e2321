/* /proc/PID/task/TID, /proc/self/task listing and /proc/thread-self (issue 15: the /proc a threaded program reads). */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <fcntl.h>
#include <dirent.h>
#include <unistd.h>
#include <stdlib.h>
static volatile int tid, done;
/* the thread lives until main is done looking (not a fixed 1 s, which main's reads under QEMU's software CPU could outlast) */
static void *t(void *a){ tid=gettid(); while(!done) usleep(1000); return 0;}
static void ls(const char *d){ DIR *x=opendir(d); if(!x){printf("%s: opendir fail\n",d);return;} struct dirent *e; int n=0; while((e=readdir(x))) if(e->d_name[0]!='.') n++; closedir(x); printf("%s: %d entries\n",d,n);}
int main(){ pthread_t th; pthread_create(&th,0,t,0); while(!tid) usleep(1000);
 char p[64], b[128];
 snprintf(p,64,"/proc/self/task/%d/stat",tid); printf("task/TID/stat %d\n",open(p,O_RDONLY)>=0);
 snprintf(p,64,"/proc/%d/task/%d/status",getpid(),tid); printf("PID/task/TID/status %d\n",open(p,O_RDONLY)>=0);
 snprintf(p,64,"/proc/%d/task/%d/stat",getpid(),999); printf("bad tid %d\n",open(p,O_RDONLY)>=0);
 ls("/proc/self/task");
 int n=readlink("/proc/thread-self",b,127); b[n>0?n:0]=0; printf("thread-self -> %s\n", n>0 && atoi(b)==getpid() ? "PID/task/TID":b);
 printf("thread-self/stat %d\n",open("/proc/thread-self/stat",O_RDONLY)>=0);
 done=1; pthread_join(th,0); }
