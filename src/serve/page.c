/* The web page of `s2s serve` (serve/page.html), built into the binary. */
#include "serve/server.h"

__asm__(".section .rodata\n"
        ".global serve_page_html\n"
        ".type serve_page_html, @object\n"
        "serve_page_html:\n"
        ".incbin \"src/serve/page.html\"\n"
        "serve_page_end:\n"
        ".byte 0\n"
        ".global serve_page_len\n"
        ".type serve_page_len, @object\n"
        ".balign 4\n"
        "serve_page_len:\n"
        ".long serve_page_end - serve_page_html\n"
        ".previous\n");
