import pytest

from shortlink import slugs


def test_generate_uses_only_the_alphabet():
    for _ in range(200):
        slug = slugs.generate(8)
        assert len(slug) == 8
        assert set(slug) <= set(slugs.DEFAULT_ALPHABET)


def test_custom_slug_rules():
    assert slugs.validate_custom("spring-news") == "spring-news"
    with pytest.raises(slugs.SlugError, match="3 to 32"):
        slugs.validate_custom("ab")
    with pytest.raises(slugs.SlugError, match="not allowed: 01o"):
        slugs.validate_custom("room101")
    with pytest.raises(slugs.SlugError, match="reserved"):
        slugs.validate_custom("Admin", reserved=["admin"])
