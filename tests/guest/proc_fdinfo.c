/* /proc/self/fdinfo/N (pos, flags, mnt_id, ino; an eventfd's count, inotify's watch lines) and /proc/sys/kernel/tainted, printed without what differs between runs (issue 15: LTP inotify12 and taint checks). */
#define _GNU_SOURCE
#include <stdio.h>
#include <fcntl.h>
#include <unistd.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/eventfd.h>
static void show(int fd){ char p[64], b[1024]; snprintf(p,64,"/proc/self/fdinfo/%d",fd); int f=open(p,O_RDONLY); int n=f<0?-1:read(f,b,1023); if(f>=0)close(f); if(n<0){printf("fd %d: no fdinfo\n",fd);return;} b[n]=0;
 /* print lines without numbers that differ between runs */
 for(char *l=strtok(b,"\n");l;l=strtok(0,"\n")) { if(!strncmp(l,"pos:",4)||!strncmp(l,"flags:",6)||!strncmp(l,"eventfd-count",13)) printf("fd %d %s\n",fd,l); else if(!strncmp(l,"inotify wd:",11)) printf("fd %d inotify line: %.14s\n",fd,l); else if(!strncmp(l,"mnt_id:",7)||!strncmp(l,"ino:",4)) printf("fd %d has %.*s\n",fd,(int)(strchr(l,':')-l),l); } }
int main(){ int a=open("/etc/passwd",O_RDONLY|O_CLOEXEC); char x[5]; read(a,x,5); show(a);
 int e=eventfd(7,EFD_NONBLOCK); show(e);
 int i=inotify_init1(0); inotify_add_watch(i,"/etc",IN_MODIFY); show(i);
 int w=open("/tmp",O_RDONLY|O_DIRECTORY); show(w);
 char t[8]; int f=open("/proc/sys/kernel/tainted",O_RDONLY); int n=read(f,t,7); printf("tainted read %d\n",n);
 return 0; }
