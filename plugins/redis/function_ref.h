// FunctionRef: a non-owning reference to something callable, for callbacks that
// are only called while the call that received them runs.
//
// A std::function may allocate and always calls through two indirections; a
// FunctionRef is two pointers and one indirect call, which matters on paths run
// once per Redis reply. The referenced callable must outlive the FunctionRef,
// which is why it is meant for parameters only, never for members.
#pragma once

#include <memory>
#include <type_traits>
#include <utility>

namespace cachet::redis {

template <class Signature>
class FunctionRef;

template <class R, class... Args>
class FunctionRef<R(Args...)> {
 public:
  template <class F>
  requires(!std::is_same_v<std::remove_cvref_t<F>, FunctionRef> &&
           std::is_invocable_r_v<R, F&, Args...>) FunctionRef(F&& callable)
  noexcept  // NOLINT: converting, like std::function
      : object_(const_cast<void*>(static_cast<const void*>(std::addressof(callable)))),
        call_(&CallThrough<std::remove_reference_t<F>>) {}

  R operator()(Args... args) const { return call_(object_, std::forward<Args>(args)...); }

 private:
  template <class F>
  static R CallThrough(void* object, Args... args) {
    return (*static_cast<F*>(object))(std::forward<Args>(args)...);
  }

  void* object_;
  R (*call_)(void*, Args...);
};

}  // namespace cachet::redis
