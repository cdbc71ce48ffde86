/* cpu.h — whether the processor running anonkit offers an instruction set
 * extension, for the paths compiled for one (target attributes) and chosen
 * at run time. x86 only (the callers' paths are). With glibc 2.33 and later
 * the answer is read from what glibc found when the program started
 * (<sys/platform/x86.h>, CPU_FEATURE_ACTIVE: usable, the operating system's
 * support of AVX's registers included); otherwise from the compiler's
 * __builtin_cpu_supports, whose run-time library asks the processor again
 * (CPUID) at every start of the program: about 0.06 ms on a virtual machine,
 * where each CPUID traps to the hypervisor, in every anonkit command. */
#ifndef AK_CPU_H
#define AK_CPU_H

#if defined(__has_include)
#if __has_include(<sys/platform/x86.h>)
#include <sys/platform/x86.h>
#define AK_CPU_FROM_GLIBC 1
#endif
#endif

typedef enum ak_cpu_feature { AK_CPU_POPCNT, AK_CPU_BMI1, AK_CPU_BMI2, AK_CPU_AVX, AK_CPU_AVX2, AK_CPU_FMA } ak_cpu_feature;

/* 1 when the running processor offers (and may use) feature f, else 0. */
static inline int ak_cpu_has(ak_cpu_feature f)
{
#if defined(AK_CPU_FROM_GLIBC)
    switch (f) {
    case AK_CPU_POPCNT: return CPU_FEATURE_ACTIVE(POPCNT) != 0;
    case AK_CPU_BMI1: return CPU_FEATURE_ACTIVE(BMI1) != 0;
    case AK_CPU_BMI2: return CPU_FEATURE_ACTIVE(BMI2) != 0;
    case AK_CPU_AVX: return CPU_FEATURE_ACTIVE(AVX) != 0;
    case AK_CPU_AVX2: return CPU_FEATURE_ACTIVE(AVX2) != 0;
    case AK_CPU_FMA: return CPU_FEATURE_ACTIVE(FMA) != 0;
    }
    return 0;
#elif defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
    switch (f) {
    case AK_CPU_POPCNT: return __builtin_cpu_supports("popcnt") != 0;
    case AK_CPU_BMI1: return __builtin_cpu_supports("bmi") != 0;
    case AK_CPU_BMI2: return __builtin_cpu_supports("bmi2") != 0;
    case AK_CPU_AVX: return __builtin_cpu_supports("avx") != 0;
    case AK_CPU_AVX2: return __builtin_cpu_supports("avx2") != 0;
    case AK_CPU_FMA: return __builtin_cpu_supports("fma") != 0;
    }
    return 0;
#else
    (void)f;
    return 0;
#endif
}

#endif
