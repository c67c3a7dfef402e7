// The system libcrypto's message digests (OpenSSL 3 EVP API): SHA-256 with
// the CPU's SHA extensions where it has them. Imported only by
// FetchSupport/SHA256Context.swift.
#include <openssl/evp.h>
