#include "auth/tls.hpp"

#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <fstream>
#include <sstream>
#include <stdexcept>

#include <grpcpp/security/server_credentials.h>

namespace spgemmd::auth {

namespace {

std::string read_pem(const std::string& path, const char* what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + std::string(what) + " " + path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

struct bio_deleter {
  void operator()(BIO* b) const { BIO_free(b); }
};
struct x509_deleter {
  void operator()(X509* x) const { X509_free(x); }
};
struct key_deleter {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};

std::unique_ptr<BIO, bio_deleter> bio_of(const std::string& pem) {
  return std::unique_ptr<BIO, bio_deleter>(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
}

// The first certificate of a PEM file; throws where there is none.
std::unique_ptr<X509, x509_deleter> first_certificate(const std::string& pem, const std::string& path,
                                                      const char* what) {
  auto bio = bio_of(pem);
  std::unique_ptr<X509, x509_deleter> cert(PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr));
  if (!cert) throw std::runtime_error(std::string(what) + " " + path + " holds no PEM certificate");
  return cert;
}

}  // namespace

std::shared_ptr<grpc::ServerCredentials> server_credentials(const tls_files& files) {
  if (!files.enabled()) return grpc::InsecureServerCredentials();
  const std::string cert = read_pem(files.cert, "--tls_cert");
  const std::string key = read_pem(files.key, "--tls_key");
  const auto leaf = first_certificate(cert, files.cert, "--tls_cert");
  auto key_bio = bio_of(key);
  std::unique_ptr<EVP_PKEY, key_deleter> pkey(PEM_read_bio_PrivateKey(key_bio.get(), nullptr, nullptr, nullptr));
  if (!pkey) throw std::runtime_error("--tls_key " + files.key + " holds no PEM private key (or it is encrypted)");
  if (X509_check_private_key(leaf.get(), pkey.get()) != 1) {
    throw std::runtime_error("--tls_key " + files.key + " is not the key of the certificate in --tls_cert " +
                             files.cert);
  }
  grpc::SslServerCredentialsOptions options(GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE);
  options.pem_key_cert_pairs.push_back({key, cert});
  if (!files.client_ca.empty()) {
    options.pem_root_certs = read_pem(files.client_ca, "--tls_client_ca");
    first_certificate(options.pem_root_certs, files.client_ca, "--tls_client_ca");
    options.client_certificate_request = GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY;
  }
  return grpc::SslServerCredentials(options);
}

}  // namespace spgemmd::auth
