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
  {
    using Callable = std::remove_reference_t<F>;
    if constexpr (std::is_function_v<Callable>) {
      // A function named directly: keep its address (function pointers convert
      // to each other and back, not to void*).
      target_.function = reinterpret_cast<void (*)()>(&callable);
      call_ = &CallFunction<Callable>;
    } else {
      target_.object = const_cast<void*>(static_cast<const void*>(std::addressof(callable)));
      call_ = &CallObject<Callable>;
    }
  }

  R operator()(Args... args) const { return call_(target_, std::forward<Args>(args)...); }

 private:
  union Target {
    void* object;
    void (*function)();
  };

  template <class F>
  static R CallObject(Target target, Args... args) {
    return (*static_cast<F*>(target.object))(std::forward<Args>(args)...);
  }
  template <class F>
  static R CallFunction(Target target, Args... args) {
    return reinterpret_cast<F*>(target.function)(std::forward<Args>(args)...);
  }

  Target target_;
  R (*call_)(Target, Args...);
};

}  // namespace cachet::redis
