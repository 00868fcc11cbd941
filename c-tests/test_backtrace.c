/* Errors raised from C strings carry a backtrace by default, as the
 * reference's do: the raising function first, then its callers, named from
 * the dynamic symbol table (this program is linked with its symbols
 * exported), each line in the reference's format. A raise site met again
 * gives the same text. (The text names files and frames of each library's
 * own making, so this test runs on ours only; test_error.c compares
 * kinds and messages with the official library.) */
#include "common.h"

static char* raised_backtrace(void) {
  TVMFFIObjectHandle err = NULL;
  TVMFFIErrorMoveFromRaised(&err);
  CHECK(err != NULL);
  const TVMFFIErrorCell* cell = (const TVMFFIErrorCell*)((const char*)err + sizeof(TVMFFIObject));
  char* text = (char*)malloc(cell->backtrace.size + 1);
  memcpy(text, cell->backtrace.data, cell->backtrace.size);
  text[cell->backtrace.size] = 0;
  TVMFFIObjectDecRef(err);
  return text;
}

__attribute__((noinline)) void bt_kernel_check(int x) {
  if (x > 0) TVMFFIErrorSetRaisedFromCStr("ValueError", "x must not be positive");
}
__attribute__((noinline)) void bt_kernel(int x) {
  bt_kernel_check(x);
  __asm__ volatile("" ::: "memory");
}
__attribute__((noinline)) void bt_recurse(int depth) {
  if (depth == 0) {
    const char* parts[2] = {"deep ", "error"};
    TVMFFIErrorSetRaisedFromCStrParts("RuntimeError", parts, 2);
  } else {
    bt_recurse(depth - 1);
  }
  __asm__ volatile("" ::: "memory");
}

/* The line index (0-based) at which `needle` first appears, or -1. */
static int line_of(const char* text, const char* needle) {
  const char* hit = strstr(text, needle);
  if (hit == NULL) return -1;
  int line = 0;
  for (const char* p = text; p < hit; ++p) line += *p == '\n';
  return line;
}

static int count_lines(const char* text) {
  int n = 0;
  for (const char* p = text; *p; ++p) n += *p == '\n';
  return n;
}

int main(void) {
  bt_kernel(1);
  char* first = raised_backtrace();
  fprintf(stderr, "%s", first);
  CHECK(strncmp(first, "  File \"", 8) == 0);
  int check = line_of(first, ", line 0, in bt_kernel_check\n");
  int kernel = line_of(first, ", line 0, in bt_kernel\n");
  int main_line = line_of(first, ", line 0, in main\n");
  CHECK(check == 0 && kernel == 1 && main_line == 2);
  CHECK(strstr(first, "test_backtrace") != NULL);
  printf("raised from C: bt_kernel_check, bt_kernel, main (%d lines)\n", count_lines(first));

  bt_kernel(2);
  char* again = raised_backtrace();
  CHECK(strcmp(first, again) == 0);
  printf("the same site again: the same text\n");

  bt_recurse(200);
  char* deep = raised_backtrace();
  CHECK(line_of(deep, "in bt_recurse\n") == 0);
  CHECK(count_lines(deep) == 64);
  printf("200 frames deep: the newest 64 frames\n");
  free(first);
  free(again);
  free(deep);
  return 0;
}
