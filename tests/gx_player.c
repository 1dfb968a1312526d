/*
 * gx_player: a stand-in for a 3DS homebrew program, run under qemu-arm so that `picaemu record` can be tested over
 * the real GDB remote protocol without a console (tests/test_record_qemu.py builds it with
 * arm-linux-gnueabihf-gcc -static).
 *
 * It maps the application's views of GPU-visible memory at their 3DS virtual addresses (linear heap at 0x30000000,
 * VRAM at 0x1F000000), then plays a script written by tests/gx_script.py from a bundled sample capture:
 * copy bytes to a virtual address, submit a GX command, present a framebuffer. The two functions below carry the
 * names and signatures of libctru's gspSubmitGxCommand and gspPresentBuffer, which is all the recorder looks for.
 * No GPU runs here: memory holds only what this "CPU" wrote, as on hardware before the GPU executes.
 *
 * Script (little-endian u32 words): magic 'GXPL', then records until kind 0:
 *   1 MEMORY   vaddr, size, size bytes padded to a multiple of 4
 *   2 GX       8 command words
 *   3 PRESENT  screen, swap, fb_a, fb_b, stride, mode
 *   4 DRAW     buffer vaddr, word offset, caller: a draw call (for `picaemu record --call-sites`). The command list
 *              is already written; like citro3d's C3D_DrawArrays, the draw function playerDraw is entered while
 *              libctru's globals gpuCmdBuf / gpuCmdBufOffset point just before its trigger packet. It is reached
 *              through draw_mesh (caller 0) or draw_sprite (caller 1), from the lines marked CALL-SITE below
 *              (tests/test_record_qemu.py finds them by those marks).
 *   5 WAIT     milliseconds: the program sleeps (a frame that takes long: `picaemu record --live` tests).
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define LINEAR_BASE 0x30000000u
#define LINEAR_SIZE 0x08000000u
#define VRAM_BASE 0x1F000000u
#define VRAM_SIZE 0x00600000u
#define MAGIC 0x4C505847u /* "GXPL" */

volatile uint32_t submitted, presented, drawn; /* keeps the hook functions from being optimised away */
uint32_t *gpuCmdBuf; /* libctru's gpu.c globals: the command buffer and its next free word */
uint32_t gpuCmdBufSize, gpuCmdBufOffset;

__attribute__((noinline, used)) void playerDraw(uint32_t count)
{
    drawn += count;
}

/* the work after each call keeps it a call (not a tail jump), so the caller has a frame to unwind */
__attribute__((noinline)) static void draw_mesh(uint32_t count)
{
    playerDraw(count); /* CALL-SITE: draw_mesh */
    drawn ^= 1;
}

__attribute__((noinline)) static void draw_sprite(uint32_t count)
{
    playerDraw(count + 1); /* CALL-SITE: draw_sprite */
    drawn ^= 2;
}

__attribute__((noinline, used)) int32_t gspSubmitGxCommand(const uint32_t gxCommand[8])
{
    submitted += gxCommand[0] & 0xFF;
    return 0;
}

__attribute__((noinline, used)) int gspPresentBuffer(unsigned screen, unsigned swap, const void *fb_a,
                                                     const void *fb_b, uint32_t stride, uint32_t mode)
{
    presented += screen + swap + stride + mode + (fb_a != fb_b);
    return 0;
}

static void map_fixed(uint32_t base, uint32_t size)
{
    void *at = mmap((void *)(uintptr_t)base, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED,
                    -1, 0);
    if (at == MAP_FAILED || (uintptr_t)at != base) {
        fprintf(stderr, "gx_player: cannot map 0x%08X\n", base);
        exit(3);
    }
}

static uint32_t *load(const char *path, size_t *words)
{
    int fd = open(path, O_RDONLY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0 || st.st_size % 4) {
        fprintf(stderr, "gx_player: cannot read %s\n", path);
        exit(2);
    }
    uint32_t *data = malloc((size_t)st.st_size);
    size_t got = 0;
    while (data && got < (size_t)st.st_size) {
        ssize_t n = read(fd, (char *)data + got, (size_t)st.st_size - got);
        if (n <= 0)
            break;
        got += (size_t)n;
    }
    close(fd);
    if (!data || got != (size_t)st.st_size || got < 4 || data[0] != MAGIC) {
        fprintf(stderr, "gx_player: %s is not a script\n", path);
        exit(2);
    }
    *words = got / 4;
    return data;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: gx_player SCRIPT\n");
        return 2;
    }
    map_fixed(LINEAR_BASE, LINEAR_SIZE);
    map_fixed(VRAM_BASE, VRAM_SIZE);
    size_t n, i = 1;
    uint32_t *w = load(argv[1], &n);
    while (i < n && w[i] != 0) {
        uint32_t kind = w[i++];
        if (kind == 1 && i + 2 <= n) {
            uint32_t vaddr = w[i], size = w[i + 1], padded = (size + 3) / 4;
            if (i + 2 + padded > n)
                break;
            memcpy((void *)(uintptr_t)vaddr, &w[i + 2], size);
            i += 2 + padded;
        } else if (kind == 2 && i + 8 <= n) {
            uint32_t command[8];
            memcpy(command, &w[i], sizeof command);
            gspSubmitGxCommand(command);
            i += 8;
        } else if (kind == 3 && i + 6 <= n) {
            gspPresentBuffer(w[i], w[i + 1], (const void *)(uintptr_t)w[i + 2], (const void *)(uintptr_t)w[i + 3],
                             w[i + 4], w[i + 5]);
            i += 6;
        } else if (kind == 4 && i + 3 <= n) {
            gpuCmdBuf = (uint32_t *)(uintptr_t)w[i];
            gpuCmdBufOffset = w[i + 1];
            if (w[i + 2] & 1)
                draw_sprite(w[i + 1]); /* CALL-SITE: main-sprite */
            else
                draw_mesh(w[i + 1]); /* CALL-SITE: main-mesh */
            i += 3;
        } else if (kind == 5 && i + 1 <= n) {
            usleep(w[i] * 1000u);
            i += 1;
        } else {
            fprintf(stderr, "gx_player: bad record kind %u at word %zu\n", kind, i - 1);
            return 2;
        }
    }
    printf("gx_player: %u command bytes submitted, %u presented\n", submitted, presented);
    return 0;
}
