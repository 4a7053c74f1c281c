/* The control for perf's inlined frames (tests/debuginfo.rs): built with
 * `gcc -O2 -g`, `leaf` and `middle` are inlined into `outer`, so a perf
 * that shows inlined frames shows `leaf` and `middle` under `outer`. */
#include <stdio.h>
#include <stdlib.h>

static inline __attribute__((always_inline)) double leaf(double x) {
  for (int i = 0; i < 50; i++) x = x * 1.0000001 + 0.5;
  return x;
}

static inline __attribute__((always_inline)) double middle(double x) {
  return leaf(x) + leaf(x * 0.5);
}

__attribute__((noinline)) double outer(double x) {
  return middle(x) - middle(x * 0.25);
}

int main(int argc, char **argv) {
  long rounds = argc > 1 ? atol(argv[1]) : 2000000;
  double sum = 0;
  for (long i = 0; i < rounds; i++) sum += outer((double)i);
  printf("%f\n", sum);
  return 0;
}
