# Warning and sanitizer flags shared by every mixtd target.
# Applied through the interface target mixtd::flags so that third-party code
# (Verilated models, generated protobuf) keeps its own flags.
add_library(mixtd_flags INTERFACE)
add_library(mixtd::flags ALIAS mixtd_flags)
target_compile_options(mixtd_flags INTERFACE -Wall -Wextra)
if(MIXTD_WERROR)
  target_compile_options(mixtd_flags INTERFACE -Werror)
endif()

if(MIXTD_SANITIZE)
  # Applied globally so that every object (including Verilated models) agrees
  # on the ASan ABI.
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
endif()
