/* CRC-32 with the IEEE 802.3 polynomial (reflected 0xEDB88320), the checksum of
   zlib, gzip and PNG: crc32_update(0, "123456789", 9) == 0xCBF43926. */
#ifndef S2S_BASE_CRC32_H
#define S2S_BASE_CRC32_H

#include <stddef.h>
#include <stdint.h>

/* Continues a checksum over n more bytes: start with crc = 0; feeding the data in
   pieces gives the same result as feeding it at once. */
uint32_t crc32_update(uint32_t crc, const void *data, size_t n);

#endif
