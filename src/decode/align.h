/*
 * Pictures of a translation's attention (decode/translate.h, TranslateAlign): source
 * tokens across, output tokens down.
 *
 * Text heatmap (align_text): a legend line, a header line with the source tokens
 * separated by single spaces after a margin as wide as the widest output token, then
 * one line per output token: the token, padded, and under each source token a cell as
 * wide as that token (display columns, at least 1) filled with one shade of the
 * weight w: "·" w < 0.1, "░" < 0.3, "▒" < 0.5, "▓" < 0.7, "█" otherwise. Lines end
 * without trailing spaces.
 *
 * SVG (align_svg): a standalone SVG 1.1 document, one cell (<rect>, gray level
 * 255·(1 - w), with a <title> tooltip "SOURCE → OUTPUT: W") per output and source
 * token pair, each source token as a rotated <text> above its column and each output
 * token as a <text> left of its row, and a <title> for the document. Tokens are XML
 * escaped.
 */
#ifndef S2S_DECODE_ALIGN_H
#define S2S_DECODE_ALIGN_H

#include "base/buf.h"
#include "decode/translate.h"

/* The shade character (UTF-8) of weight w. */
const char *align_shade(float w);
void align_text(const TranslateAlign *a, Buf *out);
void align_svg(const TranslateAlign *a, const char *title, Buf *out);
/* Appends s with & < > " ' escaped for XML. */
void align_xml_escape(const char *s, Buf *out);

#endif
