#include "kiln/core/registry.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>

namespace kiln {
namespace {

using ::testing::HasSubstr;

// A tiny component kind, registered the way real components are.
class Product {
 public:
  virtual ~Product() = default;
  virtual std::string describe() const = 0;
};

Registry<Product>& product_registry() {
  static Registry<Product> registry("test_product", "Products made by the registry tests.");
  return registry;
}

struct AlphaOptions {
  int64_t size = 3;
  std::string label = "a";
  void describe(Schema& s) {
    s.field("size", size, "How big.").min(1);
    s.field("label", label, "What it says.");
  }
};

class Alpha : public Product {
 public:
  explicit Alpha(const AlphaOptions& options) : options_(options) {}
  std::string describe() const override {
    return "alpha " + options_.label + " " + std::to_string(options_.size);
  }

 private:
  AlphaOptions options_;
};

class Beta : public Product {
 public:
  explicit Beta(const NoOptions&) {}
  std::string describe() const override { return "beta"; }
};

KILN_REGISTER(product_registry, "alpha", Alpha, AlphaOptions, "The first product.");
KILN_REGISTER(product_registry, "beta", Beta, NoOptions, "The second product.");

Json resolve(const Json& spec) { return product_registry().resolve(spec, ReadContext{"model"}); }

std::string resolve_error(const Json& spec) {
  try {
    resolve(spec);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "no error";
}

TEST(Registry, ListsItsNamesAndIsFoundByKind) {
  EXPECT_EQ(product_registry().names(), (std::vector<std::string>{"alpha", "beta"}));
  EXPECT_EQ(&registry_for_kind("test_product"), &product_registry());
  auto all = all_registries();
  EXPECT_NE(std::find(all.begin(), all.end(), &product_registry()), all.end());
  EXPECT_THROW(registry_for_kind("no_such_kind"), InternalError);
}

TEST(Registry, ResolvesANameOrASpecWithDefaultsFilledIn) {
  EXPECT_EQ(resolve("alpha"), Json::parse(R"({"type": "alpha", "size": 3, "label": "a"})"));
  EXPECT_EQ(resolve({{"type", "alpha"}, {"size", 8}}),
            Json::parse(R"({"type": "alpha", "size": 8, "label": "a"})"));
  EXPECT_EQ(resolve("beta"), Json({{"type", "beta"}}));
  // Resolving is idempotent: a resolved spec resolves to itself.
  EXPECT_EQ(resolve(resolve("alpha")), resolve("alpha"));
}

TEST(Registry, UnknownNamesListTheKnownOnesAndTheNearest) {
  EXPECT_EQ(resolve_error("alpah"),
            "config error at model: unknown test_product \"alpah\"; did you mean \"alpha\"? "
            "known: alpha, beta");
  EXPECT_THAT(resolve_error({{"type", "bta"}}),
              HasSubstr("at model.type: unknown test_product \"bta\"; did you mean \"beta\"?"));
  std::string unrelated = resolve_error("transformer");
  EXPECT_THAT(unrelated, HasSubstr("known: alpha, beta"));
  EXPECT_THAT(unrelated, ::testing::Not(HasSubstr("did you mean")));
}

TEST(Registry, MalformedSpecsAreConfigErrors) {
  EXPECT_THAT(resolve_error(5), HasSubstr("expected a test_product: NAME or {type: NAME, ...}"));
  EXPECT_THAT(resolve_error({{"size", 3}}), HasSubstr("missing key \"type\""));
  EXPECT_THAT(resolve_error({{"type", 1}}), HasSubstr("at model.type"));
  EXPECT_THAT(resolve_error({{"type", "alpha"}, {"sise", 3}}),
              HasSubstr("at model.sise: unknown key \"sise\"; did you mean \"size\"?"));
  EXPECT_THAT(resolve_error({{"type", "alpha"}, {"size", 0}}),
              HasSubstr("at model.size: expected integer >= 1, got 0"));
  EXPECT_THAT(resolve_error({{"type", "beta"}, {"size", 3}}), HasSubstr("unknown key \"size\""));
}

TEST(Registry, DuplicateNamesAreInternalErrors) {
  Registry<Product>::Entry entry;
  entry.name = "alpha";
  EXPECT_THROW(product_registry().add(entry), InternalError);

  size_t before = registration_errors().size();
  register_component<Beta, NoOptions>(product_registry(), "beta", "Registered twice.");
  ASSERT_EQ(registration_errors().size(), before + 1);
  EXPECT_THAT(registration_errors().back(),
              HasSubstr("duplicate test_product registration \"beta\""));
  registration_errors().pop_back();
  EXPECT_EQ(product_registry().names().size(), 2u);  // the first registration stays
}

TEST(Registry, CreateBuildsWithTheResolvedOptions) {
  ComponentSpec spec("test_product", resolve({{"type", "alpha"}, {"label", "z"}}));
  EXPECT_EQ(spec.type(), "alpha");
  EXPECT_EQ(spec.options(), Json::parse(R"({"size": 3, "label": "z"})"));
  EXPECT_EQ(product_registry().create(spec)->describe(), "alpha z 3");
  EXPECT_EQ(product_registry().create(ComponentSpec("test_product", "beta"))->describe(), "beta");

  ComponentSpec bad("test_product", Json{{"type", "alpha"}, {"size", -1}});
  bad.path = "model";
  try {
    product_registry().create(bad);
    ADD_FAILURE() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.path(), "model.size");
  }
  EXPECT_THROW(product_registry().create(ComponentSpec("other_kind", "alpha")), InternalError);
  // A required component the config set to null is the user's to fix, at its path.
  ComponentSpec null_spec("test_product");
  null_spec.path = "model";
  try {
    product_registry().create(null_spec);
    ADD_FAILURE() << "a null spec was built";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.path(), "model");
    EXPECT_THAT(e.what(),
                HasSubstr("expected a test_product: NAME or {type: NAME, ...}, got null"));
  }
}

TEST(Registry, DocumentsEveryComponent) {
  auto docs = product_registry().documents();
  ASSERT_EQ(docs.size(), 2u);
  EXPECT_EQ(docs[0].name, "alpha");
  EXPECT_EQ(docs[0].doc, "The first product.");
  ASSERT_EQ(docs[0].options.size(), 2u);
  EXPECT_EQ(docs[0].options[0].key, "size");
  EXPECT_EQ(docs[0].options[0].default_value, "3");
  EXPECT_TRUE(docs[1].options.empty());
  EXPECT_EQ(product_registry().kind(), "test_product");
}

struct HolderOptions {
  ComponentSpec main{"test_product", "alpha"};
  ComponentSpec optional{"test_product"};
  ComponentList items{"test_product", {"beta"}};
  void describe(Schema& s) {
    s.field("main", main, "The main product.");
    s.field("optional", optional, "Nothing unless given.");
    s.field("items", items, "More products.");
  }
};

HolderOptions read_holder(const Json& node) {
  HolderOptions holder;
  read_options(holder, node, ReadContext{"holder"});
  return holder;
}

TEST(ComponentFields, DefaultsResolveAndNullStaysEmpty) {
  HolderOptions h = read_holder(Json::object());
  EXPECT_EQ(h.main.spec, resolve("alpha"));
  EXPECT_EQ(h.main.path, "holder.main");
  EXPECT_TRUE(h.optional.empty());
  ASSERT_EQ(h.items.items.size(), 1u);
  EXPECT_EQ(h.items.items[0].spec, Json({{"type", "beta"}}));
  EXPECT_EQ(write_options(h), Json::parse(R"({"main": {"type": "alpha", "size": 3, "label": "a"},
      "optional": null, "items": [{"type": "beta"}]})"));
}

TEST(ComponentFields, ReadSpecsAndLists) {
  HolderOptions h = read_holder(Json::parse(R"({"main": {"type": "alpha", "size": 9},
      "optional": "beta", "items": ["alpha", {"type": "beta"}]})"));
  EXPECT_EQ(product_registry().create(h.main)->describe(), "alpha a 9");
  EXPECT_EQ(h.optional.type(), "beta");
  ASSERT_EQ(h.items.items.size(), 2u);
  EXPECT_EQ(h.items.items[0].spec, resolve("alpha"));
  EXPECT_EQ(h.items.items[1].path, "holder.items[1]");
  EXPECT_EQ(product_registry().create(h.items.items[1])->describe(), "beta");
}

TEST(ComponentFields, ASingleSpecWhereAListIsExpectedIsAOneItemList) {
  HolderOptions h = read_holder({{"items", {{"type", "alpha"}, {"size", 2}}}});
  ASSERT_EQ(h.items.items.size(), 1u);
  EXPECT_EQ(h.items.items[0].spec["size"], 2);
  EXPECT_EQ(read_holder({{"items", "beta"}}).items.items.size(), 1u);
  EXPECT_TRUE(read_holder({{"items", Json::array()}}).items.items.empty());
}

TEST(ComponentFields, ErrorsNameTheItem) {
  try {
    read_holder({{"items", {"alpha", "gama"}}});
    ADD_FAILURE() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.path(), "holder.items[1]");
    EXPECT_THAT(e.what(), HasSubstr("known: alpha, beta"));
  }
  auto docs = describe_options<HolderOptions>();
  EXPECT_EQ(docs[0].type, "test_product");
  EXPECT_EQ(docs[2].type, "list of test_product");
}

}  // namespace
}  // namespace kiln
