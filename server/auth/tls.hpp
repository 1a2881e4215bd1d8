// The listening port's credentials: TLS from PEM files (a certificate chain
// and its private key; with a client CA, mutual TLS: every client presents a
// certificate that CA signed), or plaintext. The files are read at start; a
// new certificate takes a restart.
#pragma once

#include <memory>
#include <string>

#include <grpcpp/security/server_credentials.h>

namespace spgemmd::auth {

struct tls_files {
  std::string cert;       // PEM certificate chain, the server's first
  std::string key;        // PEM private key of the first certificate
  std::string client_ca;  // PEM roots that client certificates must chain to; empty: none asked for

  bool enabled() const { return !cert.empty(); }
};

// TLS credentials from `files` where enabled(), else insecure ones. Throws
// std::runtime_error saying which file is wrong: unreadable, not PEM, or a key
// that is not the certificate's.
std::shared_ptr<grpc::ServerCredentials> server_credentials(const tls_files& files);

}  // namespace spgemmd::auth
