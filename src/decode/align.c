#include "decode/align.h"

#include <string.h>
#include <utf8proc.h>

const char *align_shade(float w)
{
    if (w < 0.1f)
        return "\xC2\xB7"; /* · */
    if (w < 0.3f)
        return "\xE2\x96\x91"; /* ░ */
    if (w < 0.5f)
        return "\xE2\x96\x92"; /* ▒ */
    if (w < 0.7f)
        return "\xE2\x96\x93"; /* ▓ */
    return "\xE2\x96\x88";     /* █ */
}

/* Display columns of UTF-8 s (at least 0; invalid bytes count 1), and code points. */
static int text_width(const char *s, int *chars)
{
    int w = 0, n = 0;
    utf8proc_ssize_t len = (utf8proc_ssize_t)strlen(s), i = 0;
    while (i < len) {
        utf8proc_int32_t c;
        utf8proc_ssize_t k = utf8proc_iterate((const utf8proc_uint8_t *)s + i, len - i, &c);
        if (k <= 0) {
            k = 1;
            c = '?';
        }
        int cw = utf8proc_charwidth(c);
        w += cw > 0 ? cw : 0;
        n++;
        i += k;
    }
    if (chars)
        *chars = n;
    return w;
}

static void pad(Buf *out, int n)
{
    for (int i = 0; i < n; i++)
        buf_putc(out, ' ');
}

static void trim_end(Buf *out, size_t from)
{
    while (out->len > from && out->data[out->len - 1] == ' ')
        out->data[--out->len] = '\0';
}

void align_text(const TranslateAlign *a, Buf *out)
{
    buf_puts(out, "source across, output down; \xC2\xB7 < 0.1 \xE2\x96\x91 < 0.3 \xE2\x96\x92 < 0.5 "
                  "\xE2\x96\x93 < 0.7 \xE2\x96\x88\n");
    int margin = 0;
    for (int i = 0; i < a->ntgt; i++) {
        int w = text_width(a->tgt[i], NULL);
        margin = w > margin ? w : margin;
    }
    size_t start = out->len;
    pad(out, margin);
    for (int j = 0; j < a->nsrc; j++) {
        buf_putc(out, ' ');
        buf_puts(out, a->src[j]);
    }
    trim_end(out, start);
    buf_putc(out, '\n');
    for (int i = 0; i < a->ntgt; i++) {
        start = out->len;
        buf_puts(out, a->tgt[i]);
        pad(out, margin - text_width(a->tgt[i], NULL));
        for (int j = 0; j < a->nsrc; j++) {
            int w = text_width(a->src[j], NULL);
            buf_putc(out, ' ');
            const char *sh = align_shade(a->w[(size_t)i * a->nsrc + j]);
            for (int k = 0; k < (w > 0 ? w : 1); k++)
                buf_puts(out, sh);
        }
        trim_end(out, start);
        buf_putc(out, '\n');
    }
}

void align_xml_escape(const char *s, Buf *out)
{
    for (; *s; s++) {
        switch (*s) {
        case '&': buf_puts(out, "&amp;"); break;
        case '<': buf_puts(out, "&lt;"); break;
        case '>': buf_puts(out, "&gt;"); break;
        case '"': buf_puts(out, "&quot;"); break;
        case '\'': buf_puts(out, "&apos;"); break;
        default: buf_putc(out, *s);
        }
    }
}

enum { CELL = 24, CHAR_W = 8, GAP = 8 };

void align_svg(const TranslateAlign *a, const char *title, Buf *out)
{
    int src_chars = 0, tgt_chars = 0;
    for (int j = 0; j < a->nsrc; j++) {
        int c;
        text_width(a->src[j], &c);
        src_chars = c > src_chars ? c : src_chars;
    }
    for (int i = 0; i < a->ntgt; i++) {
        int c;
        text_width(a->tgt[i], &c);
        tgt_chars = c > tgt_chars ? c : tgt_chars;
    }
    int left = GAP * 2 + CHAR_W * tgt_chars, top = GAP * 2 + CHAR_W * src_chars;
    int width = left + CELL * a->nsrc + GAP * 2, height = top + CELL * a->ntgt + GAP * 2;
    buf_printf(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                    "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%d\" "
                    "height=\"%d\" viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" "
                    "font-size=\"13\">\n<title>", width, height, width, height);
    align_xml_escape(title, out);
    buf_puts(out, "</title>\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n");
    for (int i = 0; i < a->ntgt; i++)
        for (int j = 0; j < a->nsrc; j++) {
            float w = a->w[(size_t)i * a->nsrc + j];
            int g = (int)(255.0f * (1.0f - (w < 0 ? 0 : w > 1 ? 1 : w)) + 0.5f);
            buf_printf(out, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" "
                            "fill=\"rgb(%d,%d,%d)\" stroke=\"#ddd\"><title>",
                       left + CELL * j, top + CELL * i, CELL, CELL, g, g, g);
            align_xml_escape(a->src[j], out);
            buf_puts(out, " \xE2\x86\x92 ");
            align_xml_escape(a->tgt[i], out);
            buf_printf(out, ": %.3f</title></rect>\n", (double)w);
        }
    for (int j = 0; j < a->nsrc; j++) {
        buf_printf(out, "<text transform=\"translate(%d,%d) rotate(-90)\">",
                   left + CELL * j + CELL / 2 + 5, top - GAP);
        align_xml_escape(a->src[j], out);
        buf_puts(out, "</text>\n");
    }
    for (int i = 0; i < a->ntgt; i++) {
        buf_printf(out, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">", left - GAP,
                   top + CELL * i + CELL / 2 + 5);
        align_xml_escape(a->tgt[i], out);
        buf_puts(out, "</text>\n");
    }
    buf_puts(out, "</svg>\n");
}
