#ifndef EDGEFARM_SHA256_H_
#define EDGEFARM_SHA256_H_
/* The lowercase hex SHA-256 of the file at `path` into hex (65 bytes with the NUL); 0, or -1 if unreadable. */
int sha256_file(const char *path, char hex[65]);
#endif
