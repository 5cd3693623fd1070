// resolve_s3: s3://bucket/key → the URL, region and credentials, in the AWS
// tools' order (docs/remote.md, "S3"). The signatures themselves are checked
// against botocore in tests/remote/test_s3_sig.py.
#include "io/s3_location.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "io/http_source.h"
#include "util/error.h"

namespace {

class S3LocationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char *v : {"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE",
                          "AWS_REGION", "AWS_DEFAULT_REGION", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3",
                          "AWS_SHARED_CREDENTIALS_FILE", "AWS_CONFIG_FILE"})
      unsetenv(v);
    char tmpl[] = "/tmp/zt-s3loc-XXXXXX";
    home_ = mkdtemp(tmpl);
    setenv("HOME", home_.c_str(), 1);
  }
  void TearDown() override { std::system(("rm -rf '" + home_ + "'").c_str()); }
  void write(const std::string &rel, const std::string &text) {
    std::system(("mkdir -p '" + home_ + "/.aws'").c_str());
    std::ofstream(home_ + "/" + rel) << text;
  }
  std::string home_;
};

zt_status status_of(const std::string &url, const zt::UrlSettings &s = {}) {
  try {
    zt::resolve_s3(url, s);
  } catch (const zt::Error &e) {
    return e.status();
  }
  return ZT_OK;
}

TEST_F(S3LocationTest, AnonymousVirtualHostedOnAwsByDefault) {
  const zt::S3Location l = zt::resolve_s3("s3://my-bucket/dir/a b+c%d/ü//x", {});
  EXPECT_EQ(l.http_url, "https://my-bucket.s3.us-east-1.amazonaws.com/dir/a%20b%2Bc%25d/%C3%BC//x");
  EXPECT_FALSE(l.sign);
  EXPECT_EQ(l.region_source, "the default");
  EXPECT_NE(l.credential_source.find("anonymous"), std::string::npos);
  // A bucket with a dot cannot be a TLS host label: path-style.
  EXPECT_EQ(zt::resolve_s3("s3://my.bucket/k", {}).http_url, "https://s3.us-east-1.amazonaws.com/my.bucket/k");
}

TEST_F(S3LocationTest, EnvironmentOrder) {
  setenv("AWS_DEFAULT_REGION", "eu-west-1", 1);
  EXPECT_EQ(zt::resolve_s3("s3://b1b/k", {}).region, "eu-west-1");
  setenv("AWS_REGION", "eu-central-1", 1);
  EXPECT_EQ(zt::resolve_s3("s3://b1b/k", {}).region_source, "AWS_REGION");
  setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:9000/", 1);
  EXPECT_EQ(zt::resolve_s3("s3://b1b/k", {}).http_url, "http://127.0.0.1:9000/b1b/k");  // path-style
  setenv("AWS_ENDPOINT_URL_S3", "http://127.0.0.1:9001", 1);
  EXPECT_EQ(zt::resolve_s3("s3://b1b/k", {}).http_url, "http://127.0.0.1:9001/b1b/k");
  setenv("AWS_ACCESS_KEY_ID", "AK", 1);
  setenv("AWS_SECRET_ACCESS_KEY", "SK", 1);
  setenv("AWS_SESSION_TOKEN", "TOK", 1);
  const zt::S3Location l = zt::resolve_s3("s3://b1b/k", {});
  EXPECT_TRUE(l.sign);
  EXPECT_EQ(l.access_key, "AK");
  EXPECT_EQ(l.session_token, "TOK");
  EXPECT_EQ(l.credential_source.find("SK"), std::string::npos);
  // Explicit settings come first.
  zt::UrlSettings s;
  s.aws_access_key_id = "AK2";
  s.aws_secret_access_key = "SK2";
  s.s3_region = "ap-south-1";
  s.s3_endpoint = "https://minio.example";
  s.s3_addressing = 2;
  const zt::S3Location e = zt::resolve_s3("s3://b1b/k", s);
  EXPECT_EQ(e.access_key, "AK2");
  EXPECT_TRUE(e.session_token.empty());
  EXPECT_EQ(e.region, "ap-south-1");
  EXPECT_EQ(e.http_url, "https://b1b.minio.example/k");
  s.s3_unsigned = true;
  EXPECT_FALSE(zt::resolve_s3("s3://b1b/k", s).sign);
}

TEST_F(S3LocationTest, Profiles) {
  write(".aws/credentials",
        "[default]\naws_access_key_id = DAK\naws_secret_access_key = DSK\n"
        "# a comment\n[dev]\naws_access_key_id=VAK\naws_secret_access_key=VSK\n");
  write(".aws/config",
        "[default]\nregion = us-west-2\n[profile dev]\nregion = eu-north-1\ns3 =\n  endpoint_url = "
        "http://127.0.0.1:7000\n");
  zt::S3Location l = zt::resolve_s3("s3://bkt/k", {});
  EXPECT_EQ(l.access_key, "DAK");
  EXPECT_EQ(l.region, "us-west-2");
  EXPECT_NE(l.credential_source.find("profile 'default'"), std::string::npos);
  setenv("AWS_PROFILE", "dev", 1);
  l = zt::resolve_s3("s3://bkt/k", {});
  EXPECT_EQ(l.access_key, "VAK");
  EXPECT_EQ(l.region, "eu-north-1");
  EXPECT_EQ(l.http_url, "http://127.0.0.1:7000/bkt/k");
  // The environment's keys beat AWS_PROFILE's; an explicit profile beats them.
  setenv("AWS_ACCESS_KEY_ID", "EAK", 1);
  setenv("AWS_SECRET_ACCESS_KEY", "ESK", 1);
  EXPECT_EQ(zt::resolve_s3("s3://bkt/k", {}).access_key, "EAK");
  zt::UrlSettings s;
  s.s3_profile = "dev";
  EXPECT_EQ(zt::resolve_s3("s3://bkt/k", s).access_key, "VAK");
  s.s3_profile = "nope";
  EXPECT_EQ(status_of("s3://bkt/k", s), ZT_E_NOT_FOUND);
}

TEST_F(S3LocationTest, RefusedForms) {
  EXPECT_EQ(status_of("s3://bkt"), ZT_E_INVALID_ARG);
  EXPECT_EQ(status_of("s3://bkt/"), ZT_E_INVALID_ARG);
  EXPECT_EQ(status_of("s3://Bad_Bucket!/k"), ZT_E_INVALID_ARG);
  EXPECT_EQ(status_of("s3://ab/k"), ZT_E_INVALID_ARG);
  zt::UrlSettings s;
  s.s3_region = "us-east-1:evil";
  EXPECT_EQ(status_of("s3://bkt/k", s), ZT_E_INVALID_ARG);
  s = {};
  s.s3_endpoint = "ftp://x";
  EXPECT_EQ(status_of("s3://bkt/k", s), ZT_E_INVALID_ARG);
  s.s3_endpoint = "http://user:pw@host";
  EXPECT_EQ(status_of("s3://bkt/k", s), ZT_E_INVALID_ARG);
  s = {};
  s.aws_access_key_id = "only-one";
  EXPECT_EQ(status_of("s3://bkt/k", s), ZT_E_INVALID_ARG);
}

}  // namespace
