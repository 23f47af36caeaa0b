#include <stdio.h>
volatile long sink;
__attribute__((noinline)) void leaf(int n){ for(int i=0;i<n;i++) sink+=i; }
__attribute__((noinline)) void mid(int n){ leaf(n); leaf(n/2); }
__attribute__((noinline)) void grow(int n){ for(int i=0;i<n;i++) sink^=i; }
__attribute__((noinline)) int fib(int n){ return n<2?n:fib(n-1)+fib(n-2); }
int main(int argc,char**argv){ int k = argc>1 ? 2 : 1; mid(10000); grow(10000*k); sink+=fib(15); return 0; }
